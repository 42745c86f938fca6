//! An evaluator of boolean expression text over `par1`, `par2`, … with
//! `not`, `and`, `or` and parentheses (`not` binds tightest, then `and`,
//! then `or`), written here by recursive descent: the reference the BE-Tree
//! tests compare the index's matches with. [`eval_with`] takes the same
//! grammar over operands its caller reads (comparisons of typed
//! attributes).

/// The value of `text` when `parN` is `vals[N - 1]`. Panics (failing the
/// test) on text outside that grammar, or on a `parN` past `vals`.
pub fn eval(text: &str, vals: &[bool]) -> bool {
    eval_with(text, &mut |t, at| {
        let p = t[*at];
        *at += 1;
        let n: usize = p
            .strip_prefix("par")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{p:?} is not parN"));
        vals[n - 1]
    })
}

/// An operand reader for [`eval_with`]: given the tokens and the index of
/// an operand's first token, it consumes the operand and returns its value.
pub type Leaf<'a> = dyn FnMut(&[&str], &mut usize) -> bool + 'a;

/// The value of `text` whose operands `leaf` reads: the same `not`/`and`/
/// `or`/parentheses grammar over whitespace-split tokens (parentheses are
/// tokens of their own), with `leaf` called at each operand's first token
/// to consume its tokens (advancing the index) and return its value. So
/// comparisons such as `n0 >= 5` or `s1 = "v"` are evaluated by the
/// caller's own reading of them.
pub fn eval_with(text: &str, leaf: &mut Leaf) -> bool {
    let spaced = text.replace('(', " ( ").replace(')', " ) ");
    let toks: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let value = or(&toks, &mut at, leaf);
    assert_eq!(at, toks.len(), "trailing tokens in {text:?}");
    value
}

fn or(t: &[&str], at: &mut usize, leaf: &mut Leaf) -> bool {
    let mut x = and(t, at, leaf);
    while t.get(*at) == Some(&"or") {
        *at += 1;
        // Both sides are evaluated, so a malformed right side fails even
        // when the left one decides.
        let y = and(t, at, leaf);
        x = x || y;
    }
    x
}

fn and(t: &[&str], at: &mut usize, leaf: &mut Leaf) -> bool {
    let mut x = unary(t, at, leaf);
    while t.get(*at) == Some(&"and") {
        *at += 1;
        let y = unary(t, at, leaf);
        x = x && y;
    }
    x
}

fn unary(t: &[&str], at: &mut usize, leaf: &mut Leaf) -> bool {
    let tok = *t.get(*at).expect("an operand, found the end of the text");
    match tok {
        "not" => {
            *at += 1;
            !unary(t, at, leaf)
        }
        "(" => {
            *at += 1;
            let x = or(t, at, leaf);
            assert_eq!(t.get(*at), Some(&")"), "an unclosed parenthesis");
            *at += 1;
            x
        }
        _ => leaf(t, at),
    }
}

#[cfg(test)]
mod tests {
    use super::{eval, eval_with};

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

    /// Operands of several tokens, read by the caller's leaf.
    #[test]
    fn a_leaf_reads_its_own_tokens() {
        let x = [3, 9];
        let mut leaf = |t: &[&str], at: &mut usize| {
            let (name, op, k) = (t[*at], t[*at + 1], t[*at + 2].parse::<i64>().unwrap());
            *at += 3;
            let v = x[name.strip_prefix('x').unwrap().parse::<usize>().unwrap()];
            match op {
                ">=" => v >= k,
                "<=" => v <= k,
                _ => panic!("{op}"),
            }
        };
        assert!(eval_with("x0 >= 3 and not (x1 <= 8)", &mut leaf));
        assert!(!eval_with("x0 >= 4 or (x1 <= 8 and x0 <= 9)", &mut leaf));
    }

    #[test]
    #[should_panic(expected = "trailing tokens")]
    fn trailing_text_is_refused() {
        eval("par1 par2", &[true, true]);
    }
}
