// Package rest is what every REST exchange adapter shares: pacing calls
// against the exchange's budgets without outliving a request (Pacer),
// sending a request and recording whether it may have reached the
// exchange (Send, TransportError), reading answers within a size limit
// (ReadAnswer and friends), sending a call and reading its answer with
// the adapter's parser (Fetch, SendOrder), the decimal an answer carries
// in JSON (Decimal), query and form parameters in a fixed order
// (Params), the errors for answers that cannot be read (BadAnswer), where
// an adapter's error mapping starts (Classify, ClassifyAs) and the
// exchange's clock offset (LearnOffset).
//
// What is an exchange's own (signing, endpoints and their weights, error
// and status tables, payload types) stays in its adapter.
package rest
