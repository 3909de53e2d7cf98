package binancefake

import "encoding/json"

// handleAPIRestrictions answers GET /sapi/v1/account/apiRestrictions with
// the account's rights (NoTrade, NoWithdraw). Binance enables withdrawals
// only on IP-restricted keys, so a key that may withdraw is IP-restricted.
// Source: developers.binance.com wallet/account/api-key-permission.
func (s *Server) handleAPIRestrictions(c *call) response {
	body, _ := json.Marshal(map[string]any{
		"ipRestrict":                   !c.account.noWithdraw,
		"createTime":                   1623840271000,
		"enableReading":                true,
		"enableWithdrawals":            !c.account.noWithdraw,
		"enableInternalTransfer":       false,
		"enableMargin":                 false,
		"enableFutures":                false,
		"permitsUniversalTransfer":     !c.account.noTransfer,
		"enableVanillaOptions":         false,
		"enableFixApiTrade":            false,
		"enableFixReadOnly":            false,
		"enableSpotAndMarginTrading":   !c.account.noTrade,
		"enablePortfolioMarginTrading": false,
	})
	return ok(body)
}
