package sim

import (
	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Name is the simulated exchange's name in configuration and credentials.
const Name = "sim"

// Adapter is the simulated exchange as the gateway registers it (package
// exchange): no settings, no exchange key needed, its paper ledger in the
// gateway's store.
func Adapter() exchange.Adapter {
	return exchange.Adapter{
		Name:            Name,
		InProcess:       true,
		CheckCredential: func(exgate.Credential) error { return nil },
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			return New(Options{Ledger: env.Store}), nil
		},
	}
}
