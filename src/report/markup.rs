//! Text made safe for HTML and SVG, and coordinates written short: the
//! helpers every renderer here shares.
//!
//! The one design decision: one escape serves element text and quoted
//! attribute values in both HTML and SVG (it escapes quotes and
//! apostrophes too), so no caller has to know which context it writes in;
//! it is `crate::text`'s, which terminals and markdown share.

/// A coordinate with at most two decimals and no trailing zeros: enough
/// precision for a picture a thousand units wide, and a smaller file.
pub fn num(value: f64) -> String {
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// Text made safe for XML and HTML content and attribute values, control
/// characters escaped: [`crate::text::xml`], the one escape every output
/// shares.
pub use crate::text::xml as escape_xml;

/// `text` cut to `max` characters with an ellipsis: a long path must not
/// run off the picture (the full text belongs in a `<title>`).
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// A parameter's value as people write it: a string as it is, a size
/// (a key ending in `size` or `bytes`, `bs`) in binary units, any other
/// number as it is.
pub fn param_value(key: &str, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.as_u64().map_or_else(|| n.to_string(), crate::units::bytes_or_count(key)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(0.126), "0.13");
        assert_eq!(num(-0.001), "0");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdefg", 6), "abcde…");
    }
}
