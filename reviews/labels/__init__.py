"""Labels: recording and undoing them, adjudication, the editors' preferences, their
agreement, and labels out (export) and back in (import)."""
