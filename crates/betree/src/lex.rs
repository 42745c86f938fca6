//! The expression lexer: turns text into tokens that remember their column.

use std::fmt;

use crate::parse::KEYWORDS;
use crate::{Error, Result};

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    /// A reserved word (`and`, `not`, `in`, ...): no allocation per use.
    Kw(&'static str),
    Int(i64),
    Float(f64),
    Str(String),
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

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Kw(s) => write!(f, "`{s}`"),
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
pub(crate) struct Token {
    pub tok: Tok,
    pub col: usize,
}

/// Splits `src` into tokens, ending with [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::with_capacity(chars.len() / 3 + 1);
    let mut i = 0;
    let err = |col: usize, expected: &str, found: String| Error::Parse {
        col,
        expected: expected.to_string(),
        found,
    };
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two = |n: char| chars.get(i + 1) == Some(&n);
        let (tok, len) = match c {
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            ',' => (Tok::Comma, 1),
            '=' => (Tok::Eq, 1),
            '<' if two('=') => (Tok::Le, 2),
            '<' if two('>') => (Tok::Ne, 2),
            '<' => (Tok::Lt, 1),
            '>' if two('=') => (Tok::Ge, 2),
            '>' => (Tok::Gt, 1),
            '&' if two('&') => (Tok::AndAnd, 2),
            '|' if two('|') => (Tok::OrOr, 2),
            '&' => return Err(err(col, "`&&`", "`&`".into())),
            '|' => return Err(err(col, "`||`", "`|`".into())),
            '"' => {
                let mut s = String::new();
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => {
                            return Err(err(
                                j + 1,
                                &format!("closing `\"` of the string started at column {col}"),
                                "end of expression".into(),
                            ));
                        }
                        Some('"') => break,
                        Some('\\') => {
                            match chars.get(j + 1) {
                                Some('"') => s.push('"'),
                                Some('\\') => s.push('\\'),
                                Some('n') => s.push('\n'),
                                Some('t') => s.push('\t'),
                                Some(o) => {
                                    return Err(err(
                                        j + 2,
                                        "an escape `\\\"`, `\\\\`, `\\n` or `\\t`",
                                        format!("`\\{o}`"),
                                    ));
                                }
                                None => {
                                    return Err(err(
                                        j + 2,
                                        "an escaped character",
                                        "end of expression".into(),
                                    ));
                                }
                            }
                            j += 2;
                            continue;
                        }
                        Some(&ch) => s.push(ch),
                    }
                    j += 1;
                }
                (Tok::Str(s), j + 1 - i)
            }
            c if c.is_ascii_digit()
                || (c == '-' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let mut is_float = false;
                if chars.get(j) == Some(&'.')
                    && chars.get(j + 1).is_some_and(|d| d.is_ascii_digit())
                {
                    is_float = true;
                    j += 1;
                    while j < chars.len() && chars[j].is_ascii_digit() {
                        j += 1;
                    }
                }
                if matches!(chars.get(j), Some('e' | 'E')) {
                    let mut k = j + 1;
                    if matches!(chars.get(k), Some('+' | '-')) {
                        k += 1;
                    }
                    if chars.get(k).is_some_and(|d| d.is_ascii_digit()) {
                        is_float = true;
                        j = k;
                        while j < chars.len() && chars[j].is_ascii_digit() {
                            j += 1;
                        }
                    }
                }
                if chars
                    .get(j)
                    .is_some_and(|d| d.is_ascii_alphabetic() || *d == '_')
                {
                    return Err(err(
                        j + 1,
                        "an operator or `)` after a number",
                        format!("`{}`", chars[j]),
                    ));
                }
                let text: String = chars[i..j].iter().collect();
                let tok = if is_float {
                    Tok::Float(
                        text.parse()
                            .map_err(|_| err(col, "a float", format!("`{text}`")))?,
                    )
                } else {
                    Tok::Int(text.parse().map_err(|_| {
                        err(col, "an integer that fits in 64 bits", format!("`{text}`"))
                    })?)
                };
                (tok, j - i)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut j = i + 1;
                while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                let tok = match KEYWORDS.iter().find(|k| **k == word) {
                    Some(k) => Tok::Kw(k),
                    None => Tok::Ident(word),
                };
                (tok, j - i)
            }
            other => {
                return Err(err(
                    col,
                    "an attribute, a literal, an operator or a parenthesis",
                    format!("`{other}`"),
                ));
            }
        };
        out.push(Token { tok, col });
        i += len;
    }
    out.push(Token {
        tok: Tok::Eof,
        col: chars.len() + 1,
    });
    Ok(out)
}
