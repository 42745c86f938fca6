//! Names as they are shown: entry names and file names come from archives
//! and file systems, and a newline, carriage return or ESC in one would
//! spoof a listing or send codes to the terminal. Every place the binary
//! prints such a name (listings, progress, error messages) goes through
//! [`name`].

use std::borrow::Cow;

/// `s` with control characters made visible, as Info-ZIP shows them: C0
/// controls and DEL in caret notation (`^J` for a newline, `^[` for ESC,
/// `^?` for DEL), C1 controls (U+0080..U+009F, which some terminals obey
/// as escape sequences) as `\u{9b}`. Anything else is unchanged, and a
/// name with nothing to escape is borrowed, not copied.
pub fn name(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::name;

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(name("plain/ü.txt"), "plain/ü.txt");
        assert!(matches!(name("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(name("a\nb"), "a^Jb");
        assert_eq!(name("\r\u{1b}[2J\t"), "^M^[[2J^I");
        assert_eq!(name("\0\u{7f}"), "^@^?");
        assert_eq!(name("x\u{9b}31m"), "x\\u{9b}31m");
        // Nothing printed contains a control character any more.
        let all: String = (0u32..0x200).filter_map(char::from_u32).collect();
        assert!(!name(&all).chars().any(char::is_control));
    }
}
