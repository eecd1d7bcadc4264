//! Text made safe for HTML and SVG, and coordinates written short: the
//! helpers every renderer here shares.
//!
//! The one design decision: one escape serves element text and quoted
//! attribute values in both HTML and SVG (it escapes quotes and
//! apostrophes too), so no caller has to know which context it writes in.

/// A coordinate with at most two decimals and no trailing zeros: enough
/// precision for a picture a thousand units wide, and a smaller file.
pub fn num(value: f64) -> String {
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// Text made safe for XML and HTML content and attribute values. Control
/// characters other than tab and newline are not allowed in XML 1.0 even
/// escaped, and file names may hold them, so they become U+FFFD.
pub fn escape_xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' | '\n' => escaped.push(c),
            c if c.is_control() => escaped.push('\u{fffd}'),
            c => escaped.push(c),
        }
    }
    escaped
}

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
    fn markup_and_controls_are_escaped() {
        assert_eq!(escape_xml("a<b & \"c\" 'd'>\u{1}\t"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{fffd}\t");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdefg", 6), "abcde…");
    }
}
