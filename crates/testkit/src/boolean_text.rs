//! An evaluator of boolean expression text over `par1`, `par2`, … with
//! `not`, `and`, `or` and parentheses (`not` binds tightest, then `and`,
//! then `or`), written here by recursive descent: the reference the BE-Tree
//! tests compare the index's matches with.

/// The value of `text` when `parN` is `vals[N - 1]`. Panics (failing the
/// test) on text outside that grammar, or on a `parN` past `vals`.
pub fn eval(text: &str, vals: &[bool]) -> bool {
    let spaced = text.replace('(', " ( ").replace(')', " ) ");
    let toks: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let value = or(&toks, &mut at, vals);
    assert_eq!(at, toks.len(), "trailing tokens in {text:?}");
    value
}

fn or(t: &[&str], at: &mut usize, v: &[bool]) -> bool {
    let mut x = and(t, at, v);
    while t.get(*at) == Some(&"or") {
        *at += 1;
        // Both sides are evaluated, so a malformed right side fails even
        // when the left one decides.
        let y = and(t, at, v);
        x = x || y;
    }
    x
}

fn and(t: &[&str], at: &mut usize, v: &[bool]) -> bool {
    let mut x = unary(t, at, v);
    while t.get(*at) == Some(&"and") {
        *at += 1;
        let y = unary(t, at, v);
        x = x && y;
    }
    x
}

fn unary(t: &[&str], at: &mut usize, v: &[bool]) -> bool {
    let tok = *t.get(*at).expect("an operand, found the end of the text");
    *at += 1;
    match tok {
        "not" => !unary(t, at, v),
        "(" => {
            let x = or(t, at, v);
            assert_eq!(t.get(*at), Some(&")"), "an unclosed parenthesis");
            *at += 1;
            x
        }
        p => {
            let n: usize = p
                .strip_prefix("par")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{p:?} is not parN"));
            v[n - 1]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn precedence_is_not_then_and_then_or() {
        // Read as (par1 and par2) or par3, not par1 and (par2 or par3).
        assert!(eval("par1 and par2 or par3", &[false, false, true]));
        assert!(!eval("par1 and (par2 or par3)", &[false, false, true]));
        assert!(!eval("not par1 and par2", &[true, true]));
        assert!(eval("not (par1 and par2)", &[true, false]));
        assert!(eval("not not par1", &[true]));
    }

    #[test]
    fn every_assignment_of_a_small_formula() {
        for bits in 0..8u8 {
            let v = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
            let want = (v[0] || !v[1]) && v[2];
            assert_eq!(eval("(par1 or not par2) and par3", &v), want, "{v:?}");
        }
    }

    #[test]
    #[should_panic(expected = "trailing tokens")]
    fn trailing_text_is_refused() {
        eval("par1 par2", &[true, true]);
    }
}
