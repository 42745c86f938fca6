//! The expression lexer: turns text into tokens that remember their column.

use std::borrow::Cow;
use std::fmt;

use crate::{Error, Result};

/// A reserved word, as the lexer reads it and the parser tests it. An
/// enum rather than the word's text: testing a token against a keyword
/// compared the texts, a `memcmp` call each time, and with the lexer's
/// search of the keyword texts that was most of the byte comparison left
/// in `perfkit betree search` on the ad-targeting profile (index build
/// included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kw {
    And,
    Or,
    Not,
    In,
    Is,
    Null,
    Empty,
    One,
    None,
    All,
    Of,
    True,
    False,
}

impl Kw {
    /// Every keyword.
    const ALL: [Kw; 13] = [
        Kw::And,
        Kw::Or,
        Kw::Not,
        Kw::In,
        Kw::Is,
        Kw::Null,
        Kw::Empty,
        Kw::One,
        Kw::None,
        Kw::All,
        Kw::Of,
        Kw::True,
        Kw::False,
    ];

    /// The word as written.
    pub(crate) const fn text(self) -> &'static str {
        match self {
            Kw::And => "and",
            Kw::Or => "or",
            Kw::Not => "not",
            Kw::In => "in",
            Kw::Is => "is",
            Kw::Null => "null",
            Kw::Empty => "empty",
            Kw::One => "one",
            Kw::None => "none",
            Kw::All => "all",
            Kw::Of => "of",
            Kw::True => "true",
            Kw::False => "false",
        }
    }

    /// The keyword `word` is, if any. Every keyword is 2 to 5 lowercase
    /// letters, so a word is compared as one integer of its bytes.
    fn of(word: &str) -> Option<Kw> {
        if !(2..=5).contains(&word.len()) {
            return None;
        }
        let w = packed(word);
        Kw::ALL.into_iter().find(|&k| PACKED[k as usize] == w)
    }
}

/// A word of at most eight bytes, none of them zero, as an integer: equal
/// integers are equal words.
const fn packed(word: &str) -> u64 {
    let b = word.as_bytes();
    let mut x = 0u64;
    let mut i = 0;
    while i < b.len() && i < 8 {
        x |= (b[i] as u64) << (8 * i);
        i += 1;
    }
    x
}

/// Each keyword's text as a [`packed`] integer, by [`Kw`] number.
const PACKED: [u64; Kw::ALL.len()] = {
    let mut p = [0; Kw::ALL.len()];
    let mut i = 0;
    while i < p.len() {
        p[Kw::ALL[i] as usize] = packed(Kw::ALL[i].text());
        i += 1;
    }
    p
};

/// A token kind. Identifiers and strings borrow the text (a string with
/// escapes owns its unescaped copy): an allocation and a free per
/// identifier were a fifth of a 100,000-expression build's time on the
/// reference generator's long expressions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'a> {
    Ident(&'a str),
    /// A reserved word (`and`, `not`, `in`, ...): no allocation per use.
    Kw(Kw),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    LParen,
    RParen,
    Comma,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    AndAnd,
    OrOr,
    Eof,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Kw(k) => write!(f, "`{}`", k.text()),
            Tok::Int(i) => write!(f, "integer {i}"),
            Tok::Float(x) => write!(f, "float {x}"),
            Tok::Str(s) => write!(f, "string {s:?}"),
            Tok::LParen => f.write_str("`(`"),
            Tok::RParen => f.write_str("`)`"),
            Tok::Comma => f.write_str("`,`"),
            Tok::Lt => f.write_str("`<`"),
            Tok::Le => f.write_str("`<=`"),
            Tok::Gt => f.write_str("`>`"),
            Tok::Ge => f.write_str("`>=`"),
            Tok::Eq => f.write_str("`=`"),
            Tok::Ne => f.write_str("`<>`"),
            Tok::AndAnd => f.write_str("`&&`"),
            Tok::OrOr => f.write_str("`||`"),
            Tok::Eof => f.write_str("end of expression"),
        }
    }
}

/// A token and its 1-based column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub col: usize,
}

/// A pull lexer over `src`: one token at a time, so that a long expression
/// is never held as a vector of characters or of tokens (that took about
/// 4 + 13 bytes per byte of text).
pub(crate) struct Lexer<'a> {
    src: &'a str,
    /// Byte offset of the next character.
    i: usize,
    /// 1-based column (in characters) of the byte at `i`.
    col: usize,
    /// Whether escaped strings are unescaped and keywords told from
    /// identifiers: a pass that only looks for lexical errors needs
    /// neither.
    keep: bool,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`; `keep` as the field says.
    pub(crate) fn new(src: &'a str, keep: bool) -> Self {
        Lexer {
            src,
            i: 0,
            col: 1,
            keep,
        }
    }

    /// The first lexical error of the text, if any (tokens are discarded).
    pub(crate) fn check(src: &str) -> Result<()> {
        let mut l = Lexer::new(src, false);
        while l.next_token()?.tok != Tok::Eof {}
        Ok(())
    }

    /// The next token; [`Tok::Eof`] (again and again) at the end.
    pub(crate) fn next_token(&mut self) -> Result<Token<'a>> {
        let b = self.src.as_bytes();
        loop {
            let i = self.i;
            // ASCII, nearly all of any text, needs no UTF-8 decoding.
            let c = match b.get(i) {
                Some(&x) if x.is_ascii() => x as char,
                Some(_) => self.src[i..].chars().next().expect("not at the end"),
                None => {
                    return Ok(Token {
                        tok: Tok::Eof,
                        col: self.col,
                    });
                }
            };
            let col = self.col;
            if c.is_whitespace() {
                self.i += c.len_utf8();
                self.col += 1;
                continue;
            }
            let two = |n: u8| b.get(i + 1) == Some(&n);
            // The token's length in bytes and in characters.
            let (tok, len, chars) = match c {
                '(' => (Tok::LParen, 1, 1),
                ')' => (Tok::RParen, 1, 1),
                ',' => (Tok::Comma, 1, 1),
                '=' => (Tok::Eq, 1, 1),
                '<' if two(b'=') => (Tok::Le, 2, 2),
                '<' if two(b'>') => (Tok::Ne, 2, 2),
                '<' => (Tok::Lt, 1, 1),
                '>' if two(b'=') => (Tok::Ge, 2, 2),
                '>' => (Tok::Gt, 1, 1),
                '&' if two(b'&') => (Tok::AndAnd, 2, 2),
                '|' if two(b'|') => (Tok::OrOr, 2, 2),
                '&' => return Err(err(col, "`&&`", "`&`".into())),
                '|' => return Err(err(col, "`||`", "`|`".into())),
                '"' if let Some(k) = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'"' || x == b'\\')
                    .filter(|&k| b[i + 1 + k] == b'"') =>
                {
                    // No escape: the text between the quotes, borrowed.
                    let text = &self.src[i + 1..i + 1 + k];
                    let n = text.chars().count();
                    (Tok::Str(Cow::Borrowed(text)), k + 2, n + 2)
                }
                '"' => self.quoted(i, col)?,
                c if c.is_ascii_digit()
                    || (c == '-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
                {
                    self.number(i, col)?
                }
                c if c.is_ascii_alphabetic() || c == '_' => self.word(i),
                other => {
                    return Err(err(
                        col,
                        "an attribute, a literal, an operator or a parenthesis",
                        format!("`{other}`"),
                    ));
                }
            };
            self.i += len;
            self.col += chars;
            return Ok(Token { tok, col });
        }
    }

    // The token kinds below are next_token's longer arms, each a token of
    // its own: `i` is the byte offset of its first character, `col` its
    // column; each returns the token and its length in bytes and in
    // characters. Words and numbers are most tokens: kept out of line,
    // `word` alone added ~25 % to the lexer's instructions (callgrind,
    // betree_quick), so those two are inlined into next_token's loop.

    /// A string with escapes (next_token takes the ones without).
    fn quoted(&self, i: usize, col: usize) -> Result<(Tok<'a>, usize, usize)> {
        let mut s = String::new();
        // `j`: byte offset, `n`: characters from the opening quote.
        let (mut j, mut n) = (i + 1, 1usize);
        loop {
            let mut rest = self.src[j..].chars();
            match rest.next() {
                None => {
                    return Err(err(
                        col + n,
                        &format!("closing `\"` of the string started at column {col}"),
                        "end of expression".into(),
                    ));
                }
                Some('"') => break,
                Some('\\') => {
                    let e = match rest.next() {
                        Some('"') => '"',
                        Some('\\') => '\\',
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some(o) => {
                            return Err(err(
                                col + n + 1,
                                "an escape `\\\"`, `\\\\`, `\\n` or `\\t`",
                                format!("`\\{o}`"),
                            ));
                        }
                        None => {
                            return Err(err(
                                col + n + 1,
                                "an escaped character",
                                "end of expression".into(),
                            ));
                        }
                    };
                    if self.keep {
                        s.push(e);
                    }
                    j += 2;
                    n += 2;
                    continue;
                }
                Some(ch) => {
                    if self.keep {
                        s.push(ch);
                    }
                    j += ch.len_utf8();
                }
            }
            n += 1;
        }
        Ok((Tok::Str(Cow::Owned(s)), j + 1 - i, n + 1))
    }

    /// An integer or a float, `-` and exponent included.
    #[inline(always)]
    fn number(&self, i: usize, col: usize) -> Result<(Tok<'a>, usize, usize)> {
        let b = self.src.as_bytes();
        // Numbers are ASCII: bytes and characters coincide.
        let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
        let mut j = i + 1;
        while digit(j) {
            j += 1;
        }
        let mut is_float = false;
        if b.get(j) == Some(&b'.') && digit(j + 1) {
            is_float = true;
            j += 1;
            while digit(j) {
                j += 1;
            }
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            let mut k = j + 1;
            if matches!(b.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            if digit(k) {
                is_float = true;
                j = k;
                while digit(j) {
                    j += 1;
                }
            }
        }
        if b.get(j)
            .is_some_and(|d| d.is_ascii_alphabetic() || *d == b'_')
        {
            return Err(err(
                col + (j - i),
                "an operator or `)` after a number",
                format!("`{}`", b[j] as char),
            ));
        }
        let text = &self.src[i..j];
        let tok =
            if is_float {
                Tok::Float(
                    text.parse()
                        .map_err(|_| err(col, "a float", format!("`{text}`")))?,
                )
            } else {
                Tok::Int(text.parse().map_err(|_| {
                    err(col, "an integer that fits in 64 bits", format!("`{text}`"))
                })?)
            };
        Ok((tok, j - i, j - i))
    }

    /// An identifier or a keyword.
    #[inline(always)]
    fn word(&self, i: usize) -> (Tok<'a>, usize, usize) {
        let src = self.src;
        let b = src.as_bytes();
        let mut j = i + 1;
        while b
            .get(j)
            .is_some_and(|d| d.is_ascii_alphanumeric() || *d == b'_')
        {
            j += 1;
        }
        let word = &src[i..j];
        // A pass that keeps nothing needs no keyword either.
        let kw = if self.keep && b[i].is_ascii_lowercase() {
            Kw::of(word)
        } else {
            None
        };
        let tok = match kw {
            Some(k) => Tok::Kw(k),
            None => Tok::Ident(word),
        };
        (tok, j - i, j - i)
    }
}

/// A lexical error at `col`: what was expected there and what was found.
fn err(col: usize, expected: &str, found: String) -> Error {
    Error::Parse {
        col,
        expected: expected.to_string(),
        found,
    }
}
