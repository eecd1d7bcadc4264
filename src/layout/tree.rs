//! Tree walk (being written).
