package gateiofake

// handleAccountDetail answers GET /api/v4/account/detail: the account's
// user id and the key's IP whitelist (empty: the fake's keys work from
// anywhere) and mode (1: classic account).
// Source: Gate.io API v4, Account, "Get account detail".
func (s *Server) handleAccountDetail(c *call) (any, *apiError) {
	return map[string]any{
		"user_id":        1000001,
		"ip_whitelist":   []string{},
		"currency_pairs": []string{},
		"key":            map[string]int{"mode": 1},
		"tier":           0,
	}, nil
}
