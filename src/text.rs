//! Text fslab did not write — file names, stored tags and errors, whatever
//! a store another user handed over holds — made safe to show on a
//! terminal, in a markdown table, or in an HTML or SVG page.
//!
//! The one design decision: a control character (C0, DEL, C1) never
//! reaches an output raw, so a name cannot recolour, retitle or clear a
//! terminal, or start a line that reads as fslab's. Each is written as an
//! escape one can read and type back: `\n`, `\t`, `\r`, `\x1b` (other C0
//! and DEL), `\u{9b}` (C1). Invalid UTF-8 has become U+FFFD before text
//! gets here (`to_string_lossy`), as it always did. A backslash stays as it
//! is. JSON outputs keep the exact text: JSON strings escape control
//! characters themselves.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

/// Write the escape of the control character `c` to `out`.
fn push_control(out: &mut String, c: char) {
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\t' => write!(out, "\\t"),
        '\r' => write!(out, "\\r"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// `text` with `keep` characters as they are, every other control
/// character escaped, and `other` given the chance to write any remaining
/// character its own way (returning false leaves it as it is).
fn escaped_with(text: &str, keep: &[char], mut other: impl FnMut(&mut String, char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if keep.contains(&c) {
            out.push(c);
        } else if c.is_control() {
            push_control(&mut out, c);
        } else if !other(&mut out, c) {
            out.push(c);
        }
    }
    out
}

/// `text` for a terminal: every control character escaped, newlines and
/// tabs too (a name is one line). Borrowed when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(escaped_with(text, &[], |_, _| false))
}

/// A message of several lines for a terminal (an error quoting a guest's
/// console): its newlines kept, every other control character escaped.
pub fn escape_keeping_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(escaped_with(text, &['\n'], |_, _| false))
}

/// A path for a terminal: invalid UTF-8 as U+FFFD, control characters
/// escaped ([`escape`]).
pub fn path(path: &Path) -> String {
    escape(&path.to_string_lossy()).into_owned()
}

/// Text for a markdown table cell or list item: [`escape`]d, and what
/// markdown would read (`|` ending a cell, a backtick opening code, `<`
/// opening a tag, a backslash escaping the next one) escaped in turn.
pub fn markdown(text: &str) -> String {
    escape(text).chars().fold(String::with_capacity(text.len()), |mut out, c| {
        match c {
            '\\' | '|' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            c => out.push(c),
        }
        out
    })
}

/// Text for XML and HTML content and quoted attribute values alike (it
/// escapes both quotes too), so no caller has to know which it writes in.
/// Tabs and newlines stay (XML allows them); other control characters,
/// which XML 1.0 does not allow even as references, are escaped as
/// [`escape`] does.
pub fn xml(text: &str) -> String {
    escaped_with(text, &['\t', '\n'], |out, c| {
        let entity = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&apos;",
            _ => return false,
        };
        out.push_str(entity);
        true
    })
}

/// Every string in `value` (and every object key) [`escape`]d: a stored
/// run's whole text, before it is printed for a terminal. The strings of
/// the fields named in `lines` (an error, a command's output) are text of
/// several lines by nature: they keep their newlines
/// ([`escape_keeping_lines`]), and their printers indent or join them.
pub fn escape_strings(value: &mut serde_json::Value, lines: &[&str]) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(shown) = escape(s) {
                *s = shown;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| escape_strings(item, lines)),
        Value::Object(fields) => {
            let old = std::mem::take(fields);
            for (key, mut item) in old {
                match &mut item {
                    Value::String(s) if lines.contains(&key.as_str()) => {
                        if let Cow::Owned(shown) = escape_keeping_lines(s) {
                            *s = shown;
                        }
                    }
                    _ => escape_strings(&mut item, lines),
                }
                fields.insert(escape(&key).into_owned(), item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(escape("plain/ü € name"), "plain/ü € name");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a\x1b[31mred\nnext\t\r\x7f\u{9b}\0\\"), "a\\x1b[31mred\\nnext\\t\\r\\x7f\\u{9b}\\x00\\");
        assert_eq!(escape_keeping_lines("one\x07\ntwo\x1b"), "one\\x07\ntwo\\x1b");
        use std::os::unix::ffi::OsStrExt as _;
        assert_eq!(path(Path::new(std::ffi::OsStr::from_bytes(b"/t/\xff\x1b"))), "/t/\u{fffd}\\x1b");
    }

    #[test]
    fn markdown_cells_cannot_end_open_code_or_tags() {
        assert_eq!(markdown("a|b `c` <d> \\|\x1b"), "a\\|b \\`c\\` &lt;d> \\\\\\|\\\\x1b");
    }

    #[test]
    fn markup_and_controls_are_escaped_for_xml() {
        assert_eq!(xml("a<b & \"c\" 'd'>\u{1}\t\n"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\\x01\t\n");
    }

    #[test]
    fn every_string_and_key_of_a_value_is_escaped() {
        let mut value = serde_json::json!({"tag\x1b": ["x\ny", 1, null, {"k": "\u{9b}"}], "n": 2.5, "error": "a\x1b\nb"});
        escape_strings(&mut value, &["error"]);
        let want = serde_json::json!({"tag\\x1b": ["x\\ny", 1, null, {"k": "\\u{9b}"}], "n": 2.5, "error": "a\\x1b\nb"});
        assert_eq!(value, want);
    }
}
