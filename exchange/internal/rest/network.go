package rest

import "github.com/exgate/exgate"

// NetworkCode is the network code of a network as a client wrote it:
// upper-cased, with the other names clients use for a network mapped to
// its code (ERC20 → ETH, TRC20 → TRX, BEP20 → BSC, POLYGON → MATIC,
// ARB → ARBITRUM, OP → OPTIMISM, AVAX → AVAXC; the input aliases of
// docs/exchanges/binance.md and docs/exchanges/gateio.md).
func NetworkCode(network string) string {
	n := exgate.NormalizeAsset(network)
	switch n {
	case "ERC20":
		return "ETH"
	case "TRC20":
		return "TRX"
	case "BEP20":
		return "BSC"
	case "POLYGON":
		return "MATIC"
	case "ARB":
		return "ARBITRUM"
	case "OP":
		return "OPTIMISM"
	case "AVAX":
		return "AVAXC"
	}
	return n
}
