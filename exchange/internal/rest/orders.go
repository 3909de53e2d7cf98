package rest

import "github.com/exgate/exgate"

// CheckOrder refuses, before anything is looked up or sent, an order
// request whose side or quantity unit is not one of the API's: the
// adapters' plans only know BUY and SELL, in the base or the quote asset.
func CheckOrder(req exgate.OrderRequest) error {
	if req.Side != exgate.SideBuy && req.Side != exgate.SideSell {
		return exgate.ParamError("side", "side must be BUY or SELL")
	}
	if req.QuantityIn != exgate.InBase && req.QuantityIn != exgate.InQuote {
		return exgate.ParamError("quantityIn", "quantityIn must be asset1 or asset2")
	}
	return nil
}
