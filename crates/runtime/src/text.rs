//! Text from a guest or a client, made safe for a line-oriented output
//! (the operator's log, the `toolhost audit` table).

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every character that could break, reorder or restyle a log
/// line written as an escape: C0 and C1 control characters (`\n`, `\r`,
/// `\t`, ESC, …, DEL) as Rust writes them (`\n`, `\u{1b}`), and the Unicode
/// line and paragraph separators and bidirectional overrides as `\u{…}`.
/// Borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    fn needs_escape(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(out, "{}", c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_and_terminal_escapes_are_written_escaped() {
        assert_eq!(escape_controls("a\nINFO fake"), "a\\nINFO fake");
        assert_eq!(escape_controls("a\r\nb"), "a\\r\\nb");
        assert_eq!(escape_controls("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(escape_controls("x\u{85}y\u{2028}z"), "x\\u{85}y\\u{2028}z");
        assert_eq!(escape_controls("rtl\u{202e}txt"), "rtl\\u{202e}txt");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "fetching https://example.com/ü \"quoted\" \\path";
        assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text));
    }
}
