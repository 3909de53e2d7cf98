package coalesce

import "github.com/exgate/exgate"

// Unwrap returns the wrapped exchange, so that its other capabilities
// (exgate.Ability) are found through the wrapper.
func (e *Exchange) Unwrap() exgate.Exchange { return e.Exchange }

var _ exgate.Unwrapper = (*Exchange)(nil)
