//! [`escape`]: names from files made safe to print on a terminal or in an error; and
//! [`human_size`], how a size in bytes reads to a person (the program's messages, the
//! report's words and chart labels all write sizes with it).
//!
//! ONNX node names, graph names and an accelerator's `name` are arbitrary strings. Printed
//! raw, an ESC starts a terminal control sequence, a newline splits an error in two, a NUL
//! cuts some terminals' output short and U+202E (right-to-left override) reorders what
//! follows it. Every place that prints such a name goes through this one function.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` changes how a terminal shows text rather than being text: a control character
/// (C0, DEL, C1: NUL, ESC, newline, ...) or a bidirectional formatting character (U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
pub fn is_unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with each [unprintable](is_unprintable) character written as Rust writes it
/// escaped (`\n`, `\t`, `\0`, `\u{1b}`, `\u{202e}`), and a backslash before one of those
/// left as it is; `text` itself, borrowed, when there is nothing to escape.
///
/// # Example
/// ```
/// use fuselage_ir::escape;
/// assert_eq!(escape("conv1"), "conv1");
/// assert_eq!(escape("a\x1b[31mb\nc\u{202e}d\0"), "a\\u{1b}[31mb\\nc\\u{202e}d\\0");
/// ```
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unprintable) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unprintable(c) {
            let _ = write!(out, "{}", c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A size as people write it: bytes below 1 KiB, else KiB, MiB or GiB, with two decimals only
/// where the size is not a whole number of the unit.
///
/// ```
/// use fuselage_ir::human_size;
/// assert_eq!(human_size(512), "512 B");
/// assert_eq!(human_size(128 << 10), "128 KiB");
/// assert_eq!(human_size(3 << 19), "1.50 MiB");
/// assert_eq!(human_size(1 << 30), "1 GiB");
/// ```
pub fn human_size(bytes: u64) -> String {
    for (scale, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= scale {
            return if bytes.is_multiple_of(scale) {
                format!("{} {unit}", bytes / scale)
            } else {
                format!("{:.2} {unit}", bytes as f64 / scale as f64)
            };
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_names_are_borrowed_and_others_escaped() {
        assert!(matches!(escape("/layer1/Conv ü 漢"), Cow::Borrowed(_)));
        assert_eq!(escape("\u{85}x\u{7f}"), "\\u{85}x\\u{7f}");
        assert_eq!(
            escape("\u{2066}\u{2069}\u{200f}"),
            "\\u{2066}\\u{2069}\\u{200f}"
        );
        assert!(!escape("a\nb\r\tc\0").chars().any(is_unprintable));
    }
}
