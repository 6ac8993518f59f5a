"""Time: when notes were written (dates, periodic notes) and the time a question asks about
(words, grammar, spans, ranges, expr)."""
