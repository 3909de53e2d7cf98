package exgate

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The operator's controls (docs/contract.md 2.6): which addresses a client key
// may call from, where an exchange key may withdraw to, and the audit
// trail of what was changed and requested.

// ControlStore is the part of a Store that keeps the operator's controls.
// Like the rest of the store it is shared by every instance on one
// database, so a change made by an admin command applies everywhere.
type ControlStore interface {
	// SetAllowedIPs replaces a client key's IP allowlist; an empty list
	// removes it (every address allowed). Returns an error wrapping
	// ErrNotFound when the client key does not exist.
	SetAllowedIPs(ctx context.Context, apiKey string, prefixes []netip.Prefix) error
	// AllowedIPs returns a client key's IP allowlist; empty when it has
	// none (or there is no such key).
	AllowedIPs(ctx context.Context, apiKey string) ([]netip.Prefix, error)

	// AllowAddress puts a withdrawal address on an exchange key's
	// allowlist, usable from a.UsableFrom (now when zero), and returns it
	// as stored. An address denied before is allowed again with the new
	// hold. Returns an error wrapping ErrConflict when the address is
	// already allowed and ErrNotFound when the exchange key (a.ClientAPIKey,
	// a.CredentialName) does not exist.
	AllowAddress(ctx context.Context, a AllowedAddress) (AllowedAddress, error)
	// DenyAddress takes the address a names (client key, exchange key,
	// asset, network, address, tag) off the allowlist. The entry is kept,
	// marked denied, so that the exchange key stays restricted. Returns an
	// error wrapping ErrNotFound when the address is not allowed.
	DenyAddress(ctx context.Context, a AllowedAddress) error
	// AllowedAddresses returns every entry of an exchange key's allowlist,
	// denied ones included, by asset, network, address and tag.
	AllowedAddresses(ctx context.Context, apiKey, name string) ([]AllowedAddress, error)

	// AppendAudit adds an entry to the audit trail and returns it with its
	// Seq and Time (now when zero). Entries are never changed or removed.
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// AppendAudits adds entries in order, all or none, setting each one's
	// Seq and Time (now when zero). It is for a writer that nobody waits
	// on (the API's records, written after their answers): as with
	// RecordOutcome, the store may hold the write back for a few
	// milliseconds to share the commit of its next write.
	AppendAudits(ctx context.Context, es []AuditEntry) error
	// AuditLog returns the entries f selects, newest first.
	AuditLog(ctx context.Context, f AuditFilter) ([]AuditEntry, error)

	// CheckMasterKey verifies that the store's secrets were sealed under
	// the master key it was opened with: the first time, it checks an
	// existing secret (if any) and stores a check value sealed under the
	// key; after that, it opens the check value. Returns an error wrapping
	// ErrWrongMasterKey when the key is not the store's.
	CheckMasterKey(ctx context.Context) error
}

// DefaultAddressHold is how long a newly allowed withdrawal address is
// held before withdrawals may go to it, unless the command line says
// otherwise (docs/contract.md 2.6); the console offers no shorter hold.
const DefaultAddressHold = 24 * time.Hour

// ErrWrongMasterKey: the master key does not open the store's secrets.
var ErrWrongMasterKey = errors.New("the master key (EXGATE_MASTER_KEY or master.key in the data dir) is not the key this store's secrets were sealed with")

// ParseIPAllowlist parses a comma-separated list of CIDR prefixes or
// single addresses ("10.0.0.0/8,2001:db8::1"). A single address is the
// prefix of that address alone. Host bits are an error ("10.0.0.1/8"), so
// that a typo does not silently widen a prefix. An empty string is the
// empty list.
func ParseIPAllowlist(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var p netip.Prefix
		if strings.Contains(part, "/") {
			var err error
			if p, err = netip.ParsePrefix(part); err != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix or an IP address", part)
			}
			if p.Addr().Is4In6() {
				return nil, fmt.Errorf("%q: write an IPv4 prefix as IPv4", part)
			}
			if p.Masked() != p {
				return nil, fmt.Errorf("%q has bits set after the prefix length; did you mean %s?", part, p.Masked())
			}
		} else {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix or an IP address", part)
			}
			a = a.Unmap().WithZone("")
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// FormatIPAllowlist writes prefixes as ParseIPAllowlist reads them.
func FormatIPAllowlist(prefixes []netip.Prefix) string {
	parts := make([]string, len(prefixes))
	for i, p := range prefixes {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// IPAllowed reports whether addr is inside one of prefixes. An IPv4
// address written as IPv6 (::ffff:10.0.0.1) is the IPv4 address.
func IPAllowed(prefixes []netip.Prefix, addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("")
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// AllowedAddress is an entry of an exchange key's withdrawal allowlist.
// Asset and network are upper-case codes; address and tag are compared
// exactly as written (an empty tag matches only a withdrawal without one).
type AllowedAddress struct {
	ClientAPIKey   string
	CredentialName string
	Asset          string
	Network        string
	Address        string
	Tag            string
	// UsableFrom is when the hold of a newly allowed address ends:
	// withdrawals to it are refused before then.
	UsableFrom time.Time
	CreatedAt  time.Time
	// DeniedAt is the zero time while the address is allowed.
	DeniedAt time.Time
}

// Matches reports whether a withdrawal goes to this entry's destination.
func (a AllowedAddress) Matches(req WithdrawalRequest) bool {
	return strings.EqualFold(a.Asset, req.Asset) && strings.EqualFold(a.Network, req.Network) &&
		a.Address == req.Address && a.Tag == req.Tag
}

// CheckWithdrawalAddress applies an exchange key's allowlist to a
// withdrawal at now: nil when the key has no allowlist or the destination
// is on it, denied no more and past its hold; otherwise an
// ADDRESS_NOT_ALLOWED error. An exchange key that ever had an allowed
// address stays restricted when every entry is denied.
func CheckWithdrawalAddress(list []AllowedAddress, req WithdrawalRequest, now time.Time) error {
	if len(list) == 0 {
		return nil
	}
	for _, a := range list {
		if !a.Matches(req) || !a.DeniedAt.IsZero() {
			continue
		}
		if now.Before(a.UsableFrom) {
			return Errorf(CodeAddressNotAllowed,
				"this address is on the exchange key's allowlist but on hold until %s", a.UsableFrom.UTC().Format(time.RFC3339))
		}
		return nil
	}
	return Errorf(CodeAddressNotAllowed, "the exchange key's withdrawal allowlist does not include this asset, network, address and tag")
}

// AuditEntry is one line of the audit trail: an admin change (Actor "cli")
// or an order, cancel or withdrawal request (Actor "api") with its outcome.
// It never holds a secret or a signature.
type AuditEntry struct {
	// Seq orders the entries; assigned by the store.
	Seq  int64
	Time time.Time
	// Actor is "cli" for an admin command, "api" for a request.
	Actor string
	// Action names what was done: "keys create", "exchange-keys
	// allow-address", "POST /v1/order/market"...
	Action      string
	APIKey      string
	ExchangeKey string
	// Details are the change's or request's parameters, secrets left out.
	Details map[string]string
	// Status, Code and IntentID are a request's outcome: the HTTP status,
	// the error code of a problem, the order's or withdrawal's id.
	Status   int
	Code     string
	IntentID string
	// RequestID is the id the gateway generated for the request, unique
	// to it; ClientRequestID is the client's own X-Request-ID, if any,
	// which anyone may set and so never stands for the request.
	RequestID       string
	ClientRequestID string
	// Remote is the client's address as the gateway decided it.
	Remote string
}

// Audit actors.
const (
	AuditActorCLI = "cli"
	AuditActorAPI = "api"
)

// AuditFilter selects audit entries: of one client key when APIKey is set,
// at or after Since when it is not zero, at most Limit (all when <= 0).
type AuditFilter struct {
	APIKey string
	Since  time.Time
	Limit  int
}
