package exgate

// KeyRights is what an exchange reports about one API key's rights, for
// `exgate doctor`. A nil field is something the exchange does not report
// (or this adapter does not read); never a guess.
type KeyRights struct {
	Read, Trade, Withdraw *bool
	// IPRestricted: the key works only from the addresses listed on the
	// exchange.
	IPRestricted *bool
}
