//! Free-space fragmentation from GETFSMAP (placeholder until it lands).
