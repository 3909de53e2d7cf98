package gateway

import (
	"slices"
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/sim"
)

// adapters is every exchange the gateway serves, one line each, in the
// order they are listed to people. The names, flags, environment
// variables, their validation, the usage text, `exgate doctor`'s checks,
// the console's health page and the credential check all come from this
// list; adding an exchange is its package and one line here (see
// docs/ARCHITECTURE.md, "Adding an exchange").
func adapters() []exchange.Adapter {
	return []exchange.Adapter{
		binance.Adapter(),
		kraken.Adapter(),
		gateio.Adapter(),
		sim.Adapter(),
	}
}

// Adapters lists the registered adapters.
func Adapters() []exchange.Adapter { return adapters() }

// ExchangeNames lists the registered exchanges' names.
func ExchangeNames() []string {
	var names []string
	for _, a := range adapters() {
		names = append(names, a.Name)
	}
	return names
}

// ExchangeList writes the names for people: "binance, kraken, gateio or
// sim", or with sep "|" for usage lines.
func ExchangeList(sep string) string {
	names := ExchangeNames()
	if sep != "" {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// CheckCredential refuses a credential no exchange would accept, before
// it is stored (exchange-keys add, the console): the name's rules
// (exgate.Credential.Check), a registered exchange, and that exchange's
// own rule (exchange.Adapter.Check), or, for a paper key
// (docs/contract.md 2.9), a real exchange and no key material. The error
// is an INVALID_PARAMETER *exgate.Error whose Param names the field.
func CheckCredential(c exgate.Credential) error {
	if err := c.Check(); err != nil {
		return err
	}
	list := adapters()
	i := slices.IndexFunc(list, func(a exchange.Adapter) bool { return a.Name == c.Exchange })
	if i < 0 {
		return exgate.ParamError("exchange", "the exchange must be one of %s", strings.Join(ExchangeNames(), ", "))
	}
	a := list[i]
	if c.Paper {
		if a.InProcess {
			return exgate.ParamError("paper", "a %s key is simulated already; --paper takes a real exchange", a.Name)
		}
		if c.Key != "" || c.Secret != "" || c.Passphrase != "" {
			return exgate.ParamError("key", "a paper key takes no exchange key, secret or passphrase: nothing signed is sent for it")
		}
		return nil
	}
	return a.Check(c)
}
