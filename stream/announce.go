package stream

// Announce sends msg once to every client subscribed to the orders
// channel of a client key that match selects: how the risk controls'
// halts and resumes reach the bots they concern (docs/contract.md 2.8:
// {"op":"halted","reason":…} and {"op":"resumed"}), once per client.
func (h *Hub) Announce(match func(apiKey string) bool, msg []byte) {
	h.mu.Lock()
	var ts []*topic
	for k, t := range h.topics {
		if k.channel == ChannelOrders && match(k.apiKey) {
			ts = append(ts, t)
		}
	}
	h.mu.Unlock()
	seen := map[sink]bool{}
	for _, t := range ts {
		t.mu.Lock()
		for sub := range t.subs {
			if !seen[sub.to] {
				seen[sub.to] = true
				sub.deliver(msg)
			}
		}
		t.mu.Unlock()
	}
}
