//! Text put into the page's HTML and SVG: one escaper for every name, label and note.

/// `s` as HTML or SVG text or attribute content: control and bidirectional characters written
/// as the terminal shows them ([`fuselage_ir::escape`]), then the markup specials as
/// entities. No name from a file can open a tag, end an attribute or reorder the text.
pub(crate) fn text(s: &str) -> String {
    let s = fuselage_ir::escape(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_cannot_open_tags_or_end_attributes() {
        assert_eq!(
            super::text("<b a=\"1\" c='2'>&\u{1b}\u{202e}"),
            "&lt;b a=&quot;1&quot; c=&apos;2&apos;&gt;&amp;\\u{1b}\\u{202e}"
        );
        assert_eq!(super::text("/layer1/Conv"), "/layer1/Conv");
    }
}
