"""The board ledger (issue 31): submissions, verification records, scores-only cards and review records turned into one
model of the board — per board and domain view, one row per fingerprint, and each row's standing decided once
(:mod:`.standing`). Every page and download of the site reads it; ``mtboard ledger`` prints it."""
