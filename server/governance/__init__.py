"""Per-site modes: one resolver, the sensitive defaults, and the policy snapshot."""
