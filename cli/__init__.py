"""The rnn2dfa command line (click + rich); no algorithms live here."""
