package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/exgate/exgate"
)

// A route is one row of routeTable: its method and path, who may call it,
// whether a key signing the legacy way may, whether the audit trail
// records it, which per-client budget it takes and its handler. The server's mux, the route limits (limits.go), the audit
// wrapper and the test that holds the table to api/openapi.yaml
// (routes_test.go) all read this one table, so adding a route is adding a
// row (and its operation in the OpenAPI document).
type route struct {
	method, path string
	access       access
	legacy       legacyRule
	audit        auditRule
	limit        LimitClass
	handle       handler
}

// handler serves one route. c is the authenticated call (nil on public
// routes). A handler writes its answer on success and returns the error
// otherwise; the server writes that error as a problem, once
// (serveRoute). An error wrapped by withPending carries the pending order
// or withdrawal a 504 answer is about.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call) error

// access is who may call a route: nobody's signature (public), or a
// signed request whose exchange key holds a permission. The zero value is
// no access, which the route-table test refuses.
type access int

const (
	public access = iota + 1
	readKey
	tradeKey
	withdrawKey
	// streamKey is GET /v1/stream's handshake: signed, with a timestamp
	// always, the keys possibly as signed query parameters (stream.go);
	// the exchange key needs read.
	streamKey
)

// permission is the exchange-key permission a signed route needs.
func (a access) permission() exgate.Permission {
	switch a {
	case tradeKey:
		return exgate.PermissionTrade
	case withdrawKey:
		return exgate.PermissionWithdraw
	case readKey, streamKey:
		return exgate.PermissionRead
	}
	return ""
}

// legacyRule says whether a client key created with --legacy-signing (no
// timestamp, so a captured request replays) may call the route: only the
// seven routes of the spec and GET /v1/order, reading the key's own orders
// (docs/contract.md 2.1). Every other route answers such a key 403
// PERMISSION_DENIED.
type legacyRule bool

const (
	legacyOK  legacyRule = true
	notLegacy legacyRule = false
)

// auditRule says whether an authenticated request to the route goes into
// the audit trail (docs/contract.md 2.6): every request that changes state
// does.
type auditRule bool

const (
	audited    auditRule = true
	notAudited auditRule = false
)

// routeTable is every route the server answers.
func routeTable() []route {
	return []route{
		{"POST", "/v1/order/market", tradeKey, legacyOK, audited, LimitOrders, (*Server).handleMarketOrder},
		{"GET", "/v1/order", readKey, legacyOK, notAudited, LimitClient, (*Server).handleOrder},
		{"GET", "/v1/market/recent-klines", readKey, legacyOK, notAudited, LimitMarketData, (*Server).handleKlines},
		{"GET", "/v1/market/order-book", readKey, legacyOK, notAudited, LimitMarketData, (*Server).handleOrderBook},
		{"GET", "/v1/wallet/account-balance", readKey, legacyOK, notAudited, LimitClient, (*Server).handleBalances},
		{"GET", "/v1/wallet/recent-deposits", readKey, legacyOK, notAudited, LimitClient, (*Server).handleDeposits},
		{"GET", "/v1/wallet/deposit", readKey, legacyOK, notAudited, LimitClient, (*Server).handleDepositAddress},
		{"POST", "/v1/wallet/withdraw", withdrawKey, legacyOK, audited, LimitWithdrawals, (*Server).handleWithdraw},
		{"GET", "/v1/wallet/withdrawal", readKey, notLegacy, notAudited, LimitClient, (*Server).handleWithdrawal},
		// The order lifecycle (docs/contract.md 2.4; lifecycle.go).
		{"POST", "/v1/order/limit", tradeKey, notLegacy, audited, LimitOrders, (*Server).handleLimitOrder},
		{"POST", "/v1/order/cancel", tradeKey, notLegacy, audited, LimitOrders, (*Server).handleCancel},
		{"POST", "/v1/order/cancel-all", tradeKey, notLegacy, audited, LimitOrders, (*Server).handleCancelAll},
		{"GET", "/v1/order/open", readKey, notLegacy, notAudited, LimitClient, (*Server).handleOpenOrders},
		{"GET", "/v1/order/recent", readKey, notLegacy, notAudited, LimitClient, (*Server).handleRecentOrders},
		{"GET", "/v1/order/fills", readKey, notLegacy, notAudited, LimitClient, (*Server).handleFills},
		{"GET", "/v1/wallet/recent-withdraws", readKey, notLegacy, notAudited, LimitClient, (*Server).handleRecentWithdrawals},
		{"GET", "/v1/market/symbols", readKey, notLegacy, notAudited, LimitMarketData, (*Server).handleSymbols},
		// Transfers between an account's wallets (docs/contract.md 2.10;
		// transfer.go): money-moving, so in the withdrawals budget.
		{"POST", "/v1/wallet/transfer", tradeKey, notLegacy, audited, LimitWithdrawals, (*Server).handleTransfer},
		{"GET", "/v1/wallet/transfer", readKey, notLegacy, notAudited, LimitClient, (*Server).handleTransferRecord},
		{"GET", "/v1/wallet/transfers", readKey, notLegacy, notAudited, LimitClient, (*Server).handleTransfers},
		// Risk controls (docs/contract.md 2.8; risk.go).
		{"GET", "/v1/account/risk", readKey, notLegacy, notAudited, LimitClient, (*Server).handleAccountRisk},
		// Streams (docs/contract.md 2.5; stream.go).
		{"GET", "/v1/stream", streamKey, notLegacy, notAudited, LimitClient, (*Server).handleStream},
		{"GET", "/healthz", public, notLegacy, notAudited, LimitNone, (*Server).handleHealth},
		{"GET", "/readyz", public, notLegacy, notAudited, LimitNone, (*Server).handleReady},
		{"GET", "/v1/openapi.yaml", public, notLegacy, notAudited, LimitNone, (*Server).handleOpenAPI},
	}
}

// Route is what the route table says of one route, for tests and
// documentation outside the package.
type Route struct {
	Method, Path string
	// Permission is what the exchange key needs; "" for a public route.
	Permission exgate.Permission
	Signed     bool
	// Legacy: a key signing the legacy way may call it.
	Legacy  bool
	Audited bool
	Limit   LimitClass
}

// Routes lists the server's routes in the order of its table.
func Routes() []Route {
	var rs []Route
	for _, rt := range routeTable() {
		rs = append(rs, Route{Method: rt.method, Path: rt.path, Permission: rt.access.permission(),
			Signed: rt.access != public, Legacy: bool(rt.legacy), Audited: bool(rt.audit), Limit: rt.limit})
	}
	return rs
}

// routes registers every route of the table; a path known with another
// method answers 405 with Allow, an unknown path 404, both as problems.
func (s *Server) routes() {
	s.limits = map[string]LimitClass{}
	// allowed lists each path's methods in the table's order: a path may
	// have several (GET and POST /v1/wallet/transfer).
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range routeTable() {
		pattern := rt.method + " " + rt.path
		s.limits[pattern] = rt.limit
		h := s.serveRoute(rt)
		if rt.audit {
			h = s.audited(pattern, h)
		}
		s.mux.Handle(pattern, h)
		if _, ok := allowed[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
		if rt.method == "GET" {
			allowed[rt.path] = append(allowed[rt.path], "HEAD")
		}
	}
	for _, p := range paths {
		allow, use := strings.Join(allowed[p], ", "), strings.Join(slices.DeleteFunc(slices.Clone(allowed[p]), func(m string) bool { return m == "HEAD" }), " or ")
		s.mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.writeProblem(w, r, exgate.Errorf(exgate.CodeMethodNotAllowed, "%s %s is not supported; use %s", r.Method, p, use))
		}))
	}
	s.mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeProblem(w, r, exgate.Errorf(exgate.CodeNotFound, "no route %s", clip(r.URL.Path)))
	}))
}

// serveRoute runs a route's handler: a signed route authenticates first
// (signed), and an error the handler returns is written as a problem.
func (s *Server) serveRoute(rt route) http.Handler {
	if rt.access == public {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := rt.handle(s, w, r, nil); err != nil {
				s.writeProblem(w, r, err)
			}
		})
	}
	return s.signed(rt.access, rt.legacy, func(w http.ResponseWriter, r *http.Request, c *call) error {
		return rt.handle(s, w, r, c)
	})
}
