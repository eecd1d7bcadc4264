//! Scaling for people: base units live in the data, units are chosen here.

/// Bytes as a short human size with binary prefixes: `512 B`, `4.0 KiB`,
/// `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// An optional figure, `-` when missing (never 0).
pub fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A score in [0, 1] with three decimals, `-` when missing.
pub fn score(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_scale_by_1024() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(opt::<u64>(None), "-");
        assert_eq!(score(Some(0.5)), "0.500");
    }
}
