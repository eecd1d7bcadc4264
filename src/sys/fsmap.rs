//! `FS_IOC_GETFSMAP` (placeholder until the GETFSMAP reader lands).
