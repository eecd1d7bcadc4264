//! Scaling for people: base units live in the data, units are chosen here.

pub use crate::units::bytes;

/// An optional figure, `-` when missing (never 0).
pub fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A score in [0, 1] with three decimals (one below 1 never as `1.000`),
/// `-` when missing.
pub fn score(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), crate::units::ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_figures_print_as_a_dash() {
        assert_eq!(opt::<u64>(None), "-");
        assert_eq!(score(Some(0.5)), "0.500");
        assert_eq!(score(Some(0.9997)), ">0.999");
    }
}
