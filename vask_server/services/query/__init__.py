"""The query pipeline: a question searched, ranked, declined or answered; connections, related
notes, notes read for a door."""
