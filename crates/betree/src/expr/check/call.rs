//! The built-in functions' calls, checked.

use super::{Checker, terr};
use crate::Result;
use crate::domain::{AttrType, article};
use crate::expr::{CapTest, GeoTest, Pred, StrOp};
use crate::parse::{Arg, Lit};

/// A call being checked: the function's name, where it stands, and its
/// arguments, with the readers that turn an argument into what the function
/// takes (or into the message that says why it cannot).
#[derive(Clone, Copy)]
struct Call<'a> {
    name: &'a str,
    col: usize,
    args: &'a [Arg<'a>],
}

impl Call<'_> {
    /// The wrong number of arguments, for a function whose arguments are `sig`.
    fn arity(&self, sig: &str) -> crate::Error {
        let n = self.args.len();
        terr(
            self.col,
            format!(
                "`{}` takes ({sig}), got {n} argument{}",
                self.name,
                if n == 1 { "" } else { "s" }
            ),
        )
    }

    /// An integer literal.
    fn int(&self, a: &Arg, what: &str) -> Result<i64> {
        let name = self.name;
        match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects an integer {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects an integer {what}, found attribute `{}`",
                    r.name
                ),
            )),
        }
    }

    /// A number literal, integer or float.
    fn num(&self, a: &Arg, what: &str) -> Result<f64> {
        let name = self.name;
        match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i as f64),
            Arg::Lit(Lit::Float(f), _) => Ok(*f),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a number {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a number {what}, found attribute `{}`",
                    r.name
                ),
            )),
        }
    }

    /// A string literal.
    fn string(&self, a: &Arg, what: &str) -> Result<String> {
        let name = self.name;
        match a {
            Arg::Lit(Lit::Str(s), _) => Ok(s.to_string()),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a string {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a string {what}, found attribute `{}`",
                    r.name
                ),
            )),
        }
    }

    /// `v`, read from `a`, if it lies in `[lo, hi]`.
    fn ranged(&self, a: &Arg, v: i64, what: &str, lo: i64, hi: i64) -> Result<i64> {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(terr(
                arg_col(a),
                format!(
                    "`{}` expects a {what} in [{lo}, {hi}], found {v}",
                    self.name
                ),
            ))
        }
    }
}

impl Checker<'_> {
    pub(super) fn call(
        &self,
        name: &str,
        col: usize,
        args: &[Arg],
        close_col: usize,
    ) -> Result<Pred> {
        let _ = close_col;
        let c = Call { name, col, args };
        match name {
            "within_frequency_cap" => self.frequency_cap(c),
            "segment_within" | "segment_before" => self.segment(c),
            "geo_within_radius" => self.geo(c),
            _ => self.string_test(c),
        }
    }

    /// `within_frequency_cap(type, namespace, value, length)`.
    fn frequency_cap(&self, c: Call<'_>) -> Result<Pred> {
        let Call { name, col, args } = c;
        let [k, ns, v, len] = args else {
            return Err(c.arity("type, namespace, value, length"));
        };
        let kind = c.string(k, "cap type")?;
        let kcol = arg_col(k);
        let id = match kind.as_str() {
            "flight" | "flightip" => self.consts.flight_id.map(|i| (i, "flight_id")),
            "advertiser" | "advertiserip" => {
                self.consts.advertiser_id.map(|i| (i, "advertiser_id"))
            }
            "campaign" | "campaignip" => self.consts.campaign_id.map(|i| (i, "campaign_id")),
            "product" | "productip" => self.consts.product_id.map(|i| (i, "product_id")),
            other => {
                return Err(terr(
                    kcol,
                    format!(
                        "unknown frequency cap type {other:?} (expected flight, flightip, advertiser, advertiserip, campaign, campaignip, product or productip)"
                    ),
                ));
            }
        };
        let Some((id, _)) = id else {
            let c = match kind.trim_end_matches("ip") {
                "flight" => "flight_id",
                "advertiser" => "advertiser_id",
                "campaign" => "campaign_id",
                _ => "product_id",
            };
            return Err(terr(
                kcol,
                format!(
                    "a {kind:?} frequency cap needs the constant `{c}` given with the expression"
                ),
            ));
        };
        let attr = self.named("frequency_caps", AttrType::FrequencyCaps, col, name)?;
        let now = self.named("now", AttrType::Int, col, name)?;
        Ok(Pred::FreqCap(Box::new(CapTest {
            attr,
            now,
            kind,
            id,
            ns: c.string(ns, "namespace")?,
            // C passes the value as `uint32_t` and the length as
            // `size_t`: values it would wrap are refused here.
            value: c.ranged(v, c.int(v, "value")?, "value", 0, u32::MAX.into())?,
            length: c.ranged(len, c.int(len, "length")?, "length", 0, i64::MAX)?,
        })))
    }

    /// `segment_within` / `segment_before([segments attribute,] id, seconds)`.
    fn segment(&self, c: Call<'_>) -> Result<Pred> {
        let Call { name, col, args } = c;
        let (attr, id, secs) = match args {
            [Arg::Attr(r), id, s] => {
                let (aid, ty) = self.attr(r)?;
                if ty != AttrType::Segments {
                    return Err(terr(
                        r.col,
                        format!(
                            "`{name}` needs a segments attribute, `{}` is {} attribute",
                            r.name,
                            article(ty)
                        ),
                    ));
                }
                (aid, id, s)
            }
            [id, s] => (
                self.named("segments_with_timestamp", AttrType::Segments, col, name)?,
                id,
                s,
            ),
            _ => return Err(c.arity("[segments attribute,] segment id, seconds")),
        };
        let now = self.named("now", AttrType::Int, col, name)?;
        Ok(Pred::Segment {
            attr,
            now,
            before: name == "segment_before",
            id: c.int(id, "segment id")?,
            // C's `segment_within` takes the seconds as `int32_t`;
            // within that range the cast is exact.
            seconds: c.ranged(
                secs,
                c.int(secs, "number of seconds")?,
                "number of seconds",
                i32::MIN.into(),
                i32::MAX.into(),
            )? as i32,
        })
    }

    /// `geo_within_radius(latitude, longitude, km)`.
    fn geo(&self, c: Call<'_>) -> Result<Pred> {
        let Call { name, col, args } = c;
        let [la, lo, km] = args else {
            return Err(c.arity("latitude, longitude, radius in km"));
        };
        Ok(Pred::Geo(Box::new(GeoTest {
            lat: self.named("latitude", AttrType::Float, col, name)?,
            lon: self.named("longitude", AttrType::Float, col, name)?,
            clat: c.num(la, "latitude")?,
            clon: c.num(lo, "longitude")?,
            km: c.num(km, "radius")?,
        })))
    }

    /// `contains` / `starts_with` / `ends_with(string attribute, string)`.
    fn string_test(&self, c: Call<'_>) -> Result<Pred> {
        let Call { name, args, .. } = c;
        let op = match name {
            "contains" => StrOp::Contains,
            "starts_with" => StrOp::StartsWith,
            _ => StrOp::EndsWith,
        };
        let [a, s] = args else {
            return Err(c.arity("string attribute, string"));
        };
        let r = match a {
            Arg::Attr(r) => r,
            Arg::Lit(l, c) => {
                return Err(terr(
                    *c,
                    format!(
                        "`{name}` expects a string attribute first, found {}",
                        l.kind()
                    ),
                ));
            }
        };
        let (attr, ty) = self.attr(r)?;
        if ty != AttrType::Str {
            return Err(terr(
                r.col,
                format!(
                    "`{name}` needs a string attribute, `{}` is {} attribute",
                    r.name,
                    article(ty)
                ),
            ));
        }
        Ok(Pred::Str {
            attr,
            op,
            s: c.string(s, "to look for")?.into(),
        })
    }
}

/// The column of a function argument.
fn arg_col(a: &Arg) -> usize {
    match a {
        Arg::Lit(_, c) => *c,
        Arg::Attr(r) => r.col,
    }
}
