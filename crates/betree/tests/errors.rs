//! Every parse and type error, with its message.

use betree::{AttrType, Bounds, Constants, Domain, Event, Index, Schema};

fn schema() -> Schema {
    Schema::from_domains([
        Domain::new("b", AttrType::Bool, false),
        Domain::new("i", AttrType::Int, true).with_bounds(Bounds::Int(0, 10)),
        Domain::new("f", AttrType::Float, true).with_bounds(Bounds::Float(0.0, 1.0)),
        Domain::new("s", AttrType::Str, true).with_bounds(Bounds::MaxStrings(2)),
        Domain::new("il", AttrType::IntList, true),
        Domain::new("sl", AttrType::StrList, true),
        Domain::new("seg", AttrType::Segments, true),
        Domain::new("frequency_caps", AttrType::FrequencyCaps, true),
        Domain::new("now", AttrType::Int, true),
        Domain::new("latitude", AttrType::Str, true),
    ])
    .unwrap()
}

fn err(expr: &str) -> String {
    let mut index = Index::new(schema());
    let consts = Constants {
        flight_id: Some(1),
        ..Constants::default()
    };
    index.insert_with(1, expr, &consts).unwrap_err().to_string()
}

macro_rules! cases {
    ($($name:ident: $expr:expr => $msg:expr;)*) => {
        $(
            #[test]
            fn $name() {
                assert_eq!(err($expr), $msg);
            }
        )*
    };
}

cases! {
    empty: "" => "parse error at column 1: expected an attribute, a literal, `not`, `true`, `false`, a function call or `(`, found end of expression";
    dangling_and: "b and" => "parse error at column 6: expected an attribute, a literal, `not`, `true`, `false`, a function call or `(`, found end of expression";
    unclosed_paren: "(b or b" => "parse error at column 8: expected `)` or an operator (`and`, `or`), found end of expression";
    extra_paren: "b)" => "parse error at column 2: expected `and`, `or` or end of expression, found `)`";
    two_attrs: "b b" => "parse error at column 3: expected `and`, `or` or end of expression, found `b`";
    single_amp: "b & b" => "parse error at column 3: expected `&&`, found `&`";
    single_pipe: "b | b" => "parse error at column 3: expected `||`, found `|`";
    bad_char: "b # b" => "parse error at column 3: expected an attribute, a literal, an operator or a parenthesis, found `#`";
    unterminated_string: "s = \"abc" => "parse error at column 9: expected closing `\"` of the string started at column 5, found end of expression";
    escape_at_end: "s = \"a\\" => "parse error at column 8: expected an escaped character, found end of expression";
    bad_escape: "s = \"a\\q\"" => "parse error at column 8: expected an escape `\\\"`, `\\\\`, `\\n` or `\\t`, found `\\q`";
    int_overflow: "i = 99999999999999999999" => "parse error at column 5: expected an integer that fits in 64 bits, found `99999999999999999999`";
    number_then_letters: "i = 12ab" => "parse error at column 7: expected an operator or `)` after a number, found `a`";
    missing_literal: "i <" => "parse error at column 4: expected a literal (integer, float or string), found end of expression";
    cmp_attr_attr: "i < i" => "parse error at column 5: expected a literal (integer, float or string), found `i`";
    in_without_list: "i in 3" => "parse error at column 6: expected `(` starting a list of values, found integer 3";
    empty_list: "i in ()" => "parse error at column 7: expected a literal (integer, float or string), found `)`";
    list_missing_comma: "i in (1 2)" => "parse error at column 9: expected `,` or `)` in a list of values, found integer 2";
    one_without_of: "il one (1)" => "parse error at column 8: expected `of`, found `(`";
    is_what: "i is 3" => "parse error at column 6: expected `null`, `not` or `empty`, found integer 3";
    is_not_what: "i is not 3" => "parse error at column 10: expected `null` or `empty`, found integer 3";
    literal_alone: "3" => "parse error at column 2: expected a comparison (`<`, `<=`, `>`, `>=`, `=`, `<>`), `in` or `not in` after a literal, found end of expression";
    literal_not_what: "3 not il" => "parse error at column 7: expected `in`, found `il`";
    literal_in_literal: "3 in 4" => "parse error at column 6: expected an attribute name, found integer 4";
    keyword_as_attr: "and" => "parse error at column 1: expected an attribute, a literal, `not`, `true`, `false`, a function call or `(`, found `and`";
    call_missing_comma: "contains(s \"a\")" => "parse error at column 12: expected `,` or `)` in the arguments, found string \"a\"";
    too_deep_through_not: &format!("{}b", "not ".repeat(128)) => "parse error at column 1: expected an expression nested at most 128 levels deep, found deeper nesting";
    too_deep_through_not_in_a_chain: &format!("b and {}b", "not ".repeat(128)) => "parse error at column 7: expected an expression nested at most 128 levels deep, found deeper nesting";
    too_deep: &format!("{}b{}", "(".repeat(129), ")".repeat(129)) => "parse error at column 129: expected an expression nested at most 128 levels deep, found deeper nesting";

    unknown_attribute: "b and zz" => "unknown attribute `zz` at column 7";
    string_vs_int: "i = \"x\"" => "type error at column 5: `i` is an integer attribute, compared with a string";
    int_vs_string: "s = 3" => "type error at column 5: `s` is a string attribute, compared with an integer";
    float_vs_string: "f < \"x\"" => "type error at column 5: `f` is a float attribute, compared with a string";
    string_ordering: "s < \"x\"" => "type error at column 1: `s` is a string attribute: only `=` and `<>` compare strings";
    bool_compared: "b = 1" => "type error at column 1: `b` is a boolean attribute and cannot be compared with a value";
    bare_non_bool: "i" => "type error at column 1: `i` is an integer attribute; only a boolean attribute stands alone as a test";
    int_out_of_bounds: "i > 11" => "type error at column 5: 11 is outside the bounds [0, 10] of `i`";
    float_out_of_bounds: "f > 1.5" => "type error at column 5: 1.5 is outside the bounds [0, 1] of `f`";
    in_on_list: "il in (1)" => "type error at column 1: `il` is an integer list attribute: `in (...)` applies to integer, enum and string attributes (for lists use `one of`)";
    in_wrong_item: "i in (1, \"a\")" => "type error at column 10: `i` is an integer attribute, compared with a string";
    list_has_wrong_type: "\"a\" in il" => "type error at column 1: `il` is an integer list attribute, searched for a string";
    list_has_not_list: "1 in i" => "type error at column 6: `i` is an integer attribute: `value in attribute` needs an integer or string list";
    set_on_scalar: "i one of (1)" => "type error at column 1: `i` is an integer attribute: `one of`/`none of`/`all of` apply to lists";
    set_wrong_item: "sl all of (1)" => "type error at column 12: `sl` is a string list attribute, compared with an integer";
    is_null_disallowed: "b is null" => "type error at column 1: `b` is declared disallow-undefined, so `is null` is meaningless";
    is_not_null_disallowed: "b is not null" => "type error at column 1: `b` is declared disallow-undefined, so `is not null` is meaningless";
    is_empty_scalar: "i is empty" => "type error at column 1: `i` is an integer attribute: `is empty` applies to lists";
    contains_arity: "contains(s)" => "type error at column 1: `contains` takes (string attribute, string), got 1 argument";
    contains_non_string: "contains(i, \"a\")" => "type error at column 10: `contains` needs a string attribute, `i` is an integer attribute";
    contains_literal_first: "starts_with(\"a\", \"b\")" => "type error at column 13: `starts_with` expects a string attribute first, found a string";
    contains_int_needle: "ends_with(s, 3)" => "type error at column 14: `ends_with` expects a string to look for, found an integer";
    segment_wrong_attr: "segment_within(i, 1, 2)" => "type error at column 16: `segment_within` needs a segments attribute, `i` is an integer attribute";
    segment_default_missing: "segment_before(1, 2)" => "type error at column 1: `segment_before` needs a segments attribute `segments_with_timestamp`, which is not declared";
    segment_arity: "segment_within(1)" => "type error at column 1: `segment_within` takes ([segments attribute,] segment id, seconds), got 1 argument";
    segment_float_id: "segment_within(seg, 1.5, 2)" => "type error at column 21: `segment_within` expects an integer segment id, found a float";
    freq_unknown_type: "within_frequency_cap(\"nope\", \"ns\", 1, 0)" => "type error at column 22: unknown frequency cap type \"nope\" (expected flight, flightip, advertiser, advertiserip, campaign, campaignip, product or productip)";
    freq_missing_constant: "within_frequency_cap(\"campaign\", \"ns\", 1, 0)" => "type error at column 22: a \"campaign\" frequency cap needs the constant `campaign_id` given with the expression";
    freq_arity: "within_frequency_cap(\"flight\")" => "type error at column 1: `within_frequency_cap` takes (type, namespace, value, length), got 1 argument";
    freq_bad_value: "within_frequency_cap(\"flight\", \"ns\", \"x\", 0)" => "type error at column 38: `within_frequency_cap` expects an integer value, found a string";
    freq_negative_length: "within_frequency_cap(\"flight\", \"ns\", 1, -1)" => "type error at column 41: `within_frequency_cap` expects a length in [0, 9223372036854775807], found -1";
    freq_value_beyond_u32: "within_frequency_cap(\"flight\", \"ns\", 4294967296, 0)" => "type error at column 38: `within_frequency_cap` expects a value in [0, 4294967295], found 4294967296";
    segment_seconds_beyond_i32: "segment_within(seg, 1, 2147483648)" => "type error at column 24: `segment_within` expects a number of seconds in [-2147483648, 2147483647], found 2147483648";
    geo_arity: "geo_within_radius(1, 2)" => "type error at column 1: `geo_within_radius` takes (latitude, longitude, radius in km), got 2 arguments";
    freq_attribute_as_type: "within_frequency_cap(s, \"ns\", 1, 0)" => "type error at column 22: `within_frequency_cap` expects a string cap type, found attribute `s`";
    freq_attribute_as_namespace: "within_frequency_cap(\"flight\", s, 1, 0)" => "type error at column 32: `within_frequency_cap` expects a string namespace, found attribute `s`";
    freq_attribute_as_value: "within_frequency_cap(\"flight\", \"ns\", i, 0)" => "type error at column 38: `within_frequency_cap` expects an integer value, found attribute `i`";
    segment_attribute_as_seconds: "segment_within(seg, 1, i)" => "type error at column 24: `segment_within` expects an integer number of seconds, found attribute `i`";
    contains_attribute_as_pattern: "contains(s, s)" => "type error at column 13: `contains` expects a string to look for, found attribute `s`";
    geo_wrong_type: "geo_within_radius(1, 2, 3)" => "type error at column 1: `geo_within_radius` needs attribute `latitude` to be a float, it is declared a string";
    // The attributes are checked before the arguments: the bad longitude
    // argument is not reached (see `geo_argument_types` for that message).
    geo_attributes_checked_before_arguments: "geo_within_radius(1, \"x\", 3)" => "type error at column 1: `geo_within_radius` needs attribute `latitude` to be a float, it is declared a string";
}

#[test]
fn too_many_distinct_strings() {
    let mut index = Index::new(schema());
    index.insert(1, "s = \"a\" or s = \"b\"").unwrap();
    index.insert(2, "s in (\"a\", \"b\")").unwrap();
    assert_eq!(
        index.insert(3, "s <> \"c\"").unwrap_err().to_string(),
        "domain error: attribute `s` allows at most 2 distinct strings in expressions, this expression would bring it to 3"
    );
}

#[test]
fn a_failed_insert_gives_its_strings_back() {
    // `s` allows 2 strings. Each failing insert names new ones before its
    // error (a type error after them, or the bound itself); had they
    // stayed counted, the last insert would bring `s` to 3 or more.
    let mut index = Index::new(schema());
    index
        .insert(1, "s = \"x\" and s = \"y\" and nope")
        .unwrap_err();
    index.insert(2, "s in (\"p\", \"q\", \"r\")").unwrap_err();
    index.insert(3, "s = \"a\" or s = \"b\"").unwrap();
    assert!(index.insert(4, "s = \"x\"").is_err());
}

#[test]
fn duplicate_and_unknown_ids() {
    let mut index = Index::new(schema());
    index.insert(7, "b").unwrap();
    assert_eq!(
        index.insert(7, "not b").unwrap_err().to_string(),
        "an expression with id 7 is already stored"
    );
    assert_eq!(
        index.delete(8).unwrap_err().to_string(),
        "no expression with id 8 is stored"
    );
    index.delete(7).unwrap();
    assert_eq!(
        index.delete(7).unwrap_err().to_string(),
        "no expression with id 7 is stored"
    );
}

#[test]
fn geo_argument_types() {
    let schema = Schema::from_domains([
        Domain::new("latitude", AttrType::Float, true),
        Domain::new("longitude", AttrType::Float, true),
    ])
    .unwrap();
    let mut index = Index::new(schema);
    assert_eq!(
        index
            .insert(1, "geo_within_radius(1, \"x\", 3)")
            .unwrap_err()
            .to_string(),
        "type error at column 22: `geo_within_radius` expects a number longitude, found a string"
    );
    assert_eq!(
        index
            .insert(1, "geo_within_radius(latitude, 2, 3)")
            .unwrap_err()
            .to_string(),
        "type error at column 19: `geo_within_radius` expects a number latitude, found attribute `latitude`"
    );
    assert_eq!(
        index
            .insert(1, "geo_within_radius(1, 2, longitude)")
            .unwrap_err()
            .to_string(),
        "type error at column 25: `geo_within_radius` expects a number radius, found attribute `longitude`"
    );
    index.insert(2, "geo_within_radius(1, 2.5, 3)").unwrap();
}

#[test]
fn functions_name_the_attributes_they_need() {
    let e = |domains: Vec<Domain>, expr: &str| {
        let mut index = Index::new(Schema::from_domains(domains).unwrap());
        let consts = Constants {
            flight_id: Some(1),
            ..Constants::default()
        };
        index.insert_with(1, expr, &consts).unwrap_err().to_string()
    };
    let freq = "within_frequency_cap(\"flight\", \"ns\", 1, 0)";
    assert_eq!(
        e(vec![Domain::new("now", AttrType::Int, true)], freq),
        "type error at column 1: `within_frequency_cap` needs a frequency caps attribute `frequency_caps`, which is not declared"
    );
    assert_eq!(
        e(
            vec![Domain::new("frequency_caps", AttrType::FrequencyCaps, true)],
            freq
        ),
        "type error at column 1: `within_frequency_cap` needs an integer attribute `now`, which is not declared"
    );
    assert_eq!(
        e(
            vec![
                Domain::new("frequency_caps", AttrType::FrequencyCaps, true),
                Domain::new("now", AttrType::Str, true),
            ],
            freq
        ),
        "type error at column 1: `within_frequency_cap` needs attribute `now` to be an integer, it is declared a string"
    );
    assert_eq!(
        e(
            vec![Domain::new("frequency_caps", AttrType::Int, true)],
            freq
        ),
        "type error at column 1: `within_frequency_cap` needs attribute `frequency_caps` to be a frequency caps, it is declared an integer"
    );
    assert_eq!(
        e(
            vec![Domain::new("seg", AttrType::Segments, true)],
            "segment_within(seg, 1, 2)"
        ),
        "type error at column 1: `segment_within` needs an integer attribute `now`, which is not declared"
    );
    assert_eq!(
        e(
            vec![Domain::new("latitude", AttrType::Float, true)],
            "geo_within_radius(1, 2, 3)"
        ),
        "type error at column 1: `geo_within_radius` needs a float attribute `longitude`, which is not declared"
    );
}

#[test]
fn schema_errors() {
    assert_eq!(
        Schema::from_domains([
            Domain::new("a", AttrType::Bool, true),
            Domain::new("a", AttrType::Int, true)
        ])
        .unwrap_err()
        .to_string(),
        "domain error: attribute `a` is declared twice"
    );
    assert_eq!(
        Schema::from_domains([Domain::new("a-b", AttrType::Bool, true)])
            .unwrap_err()
            .to_string(),
        "domain error: attribute name `a-b` is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"
    );
}

#[test]
fn event_errors() {
    let s = schema();
    let e = |t: &str| Event::from_json(&s, t).unwrap_err().to_string();
    assert_eq!(e("[1]"), "invalid event: an event must be a JSON object");
    assert_eq!(
        e("{\"zz\": 1}"),
        "invalid event: unknown attribute `zz` in event"
    );
    assert_eq!(
        e("{\"i\": \"x\"}"),
        "invalid event: attribute `i` is an integer, the JSON value \"x\" is not"
    );
    assert_eq!(
        e("{\"il\": [1, \"x\"]}"),
        "invalid event: attribute `il` is an integer list, the JSON value [1,\"x\"] is not"
    );
    assert_eq!(
        e("{\"seg\": [[1]]}"),
        "invalid event: attribute `seg` is a segments, the JSON value [[1]] is not"
    );
    assert_eq!(
        e("{\"i\": 1"),
        "invalid event: invalid JSON: EOF while parsing an object at line 1 column 7"
    );
    assert_eq!(
        Event::from_bools(&s, &[true]).unwrap_err().to_string(),
        "invalid event: event has 1 values but 10 attributes are declared"
    );
    let cap = |fields: &str| {
        e(&format!(
            r#"{{"frequency_caps": [{{"type": "flight", "id": 1, "namespace": "ns", "value": 0}}, {{{fields}}}]}}"#
        ))
    };
    assert_eq!(
        e(r#"{"frequency_caps": {"type": "flight"}}"#),
        "invalid event: attribute `frequency_caps` is a frequency caps, the JSON value {\"type\":\"flight\"} is not"
    );
    assert_eq!(
        e(r#"{"frequency_caps": [1]}"#),
        "invalid event: attribute `frequency_caps`, frequency cap 1: expected an object with \"type\", \"id\", \"namespace\", \"value\" and \"timestamp\", found 1"
    );
    assert_eq!(
        cap(r#""type": "flight""#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"id\" must be an integer in [0, 4294967295]"
    );
    assert_eq!(
        cap(r#""type": 1, "id": 1, "namespace": "ns", "value": 0"#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"type\" must be a string"
    );
    assert_eq!(
        cap(r#""type": "flight", "id": -1, "namespace": "ns", "value": 0"#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"id\" must be an integer in [0, 4294967295]"
    );
    assert_eq!(
        cap(r#""type": "flight", "id": 1, "value": 0"#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"namespace\" must be a string"
    );
    assert_eq!(
        cap(r#""type": "flight", "id": 1, "namespace": "ns", "value": -1"#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"value\" must be an integer in [0, 4294967295]"
    );
    assert_eq!(
        cap(r#""type": "flight", "id": 1, "namespace": "ns", "value": 0, "timestamp": "x""#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: \"timestamp\" must be an integer (µs) or null"
    );
    assert_eq!(
        cap(r#""type": "flight", "id": 1, "namespace": "ns", "value": 0, "ts": 1"#),
        "invalid event: attribute `frequency_caps`, frequency cap 2: unknown field \"ts\""
    );
    // The builder checks the counter's range too.
    let cap = betree::FrequencyCap {
        kind: "flight".into(),
        id: 1,
        namespace: "ns".into(),
        value: -1,
        timestamp: None,
    };
    assert_eq!(
        betree::EventBuilder::new(&s)
            .frequency_caps("frequency_caps", [cap])
            .unwrap_err()
            .to_string(),
        "invalid event: attribute `frequency_caps`: frequency cap counter -1 is outside [0, 4294967295]"
    );
    let enums = Schema::from_domains([
        Domain::new("e", AttrType::IntEnum, true).with_bounds(Bounds::Int(0, 3))
    ])
    .unwrap();
    assert_eq!(
        Event::from_json(&enums, r#"{"e": 4}"#)
            .unwrap_err()
            .to_string(),
        "invalid event: attribute `e` is an integer enum in [0, 3], 4 is outside"
    );
    assert_eq!(
        betree::EventBuilder::new(&enums)
            .str("e", "x")
            .unwrap_err()
            .to_string(),
        "invalid event: attribute `e` is an integer enum, the value given is not"
    );
}

#[test]
fn deepest_accepted_nesting_parses() {
    let mut index = Index::new(schema());
    let d = 128;
    index
        .insert(1, &format!("{}b{}", "(".repeat(d), ")".repeat(d)))
        .unwrap();
    // A leaf is one level, each `not` another.
    index
        .insert(2, &format!("{}b", "not ".repeat(d - 1)))
        .unwrap();
    assert!(index.insert(3, &format!("{}b", "not ".repeat(d))).is_err());
    // Parentheses bound the parser's recursion, not the tree's depth:
    // 64 of them around 64 `not`s make a tree 65 levels deep.
    index
        .insert(
            6,
            &format!("{}{}b{}", "(".repeat(64), "not ".repeat(64), ")".repeat(64)),
        )
        .unwrap();
    // Long flat chains are balanced, not refused.
    let chain = vec!["b"; 5000].join(" and ");
    index.insert(4, &chain).unwrap();
    let chain = vec!["(b or not b)"; 5000].join(" && ");
    index.insert(5, &chain).unwrap();
}

#[test]
fn events_of_another_schema_are_refused_not_indexed() {
    // Same attribute count, different boolean count: the event's bitset is
    // shorter than the index's boolean slots.
    let ints = Schema::from_domains([
        Domain::new("x", AttrType::Int, true),
        Domain::new("y", AttrType::Int, true),
    ])
    .unwrap();
    let bools = Schema::boolean_params(2);
    let mut index = Index::new(bools.clone());
    index.insert(1, "par1 or par2").unwrap();
    let ev = Event::from_json(&ints, r#"{"x": 1}"#).unwrap();
    let msg = "invalid event: the event was built for another schema (2 attributes, room for 0 booleans); this schema has 2 attributes, 2 of them boolean";
    assert_eq!(index.search(&ev).unwrap_err().to_string(), msg);
    assert_eq!(index.search_iter(&ev).unwrap_err().to_string(), msg);
    assert_eq!(
        index
            .search_batch(&[Event::from_bools(&bools, &[true, false]).unwrap(), ev])
            .unwrap_err()
            .to_string(),
        msg
    );
    let mut out = vec![vec![7u64]; 3];
    let err = index
        .search_batch_into(&[Event::from_json(&ints, r#"{"x": 1}"#).unwrap()], &mut out)
        .unwrap_err();
    assert_eq!(err.to_string(), msg);
    assert!(
        out.is_empty(),
        "a failed batch leaves no stale results: {out:?}"
    );
    // Setting through the wrong schema is refused the same way.
    let mut ev = Event::from_bools(&bools, &[true, true]).unwrap();
    assert_eq!(
        ev.set(&schema(), 0, betree::Value::Bool(false))
            .unwrap_err()
            .to_string(),
        "invalid event: the event was built for another schema (2 attributes, room for 64 booleans); this schema has 10 attributes, 1 of them boolean"
    );
}

#[test]
fn undeclared_attribute_ids_are_errors() {
    let s = schema();
    let mut ev = Event::empty(&s);
    let msg = "invalid event: attribute id 10 is not declared (the schema has 10 attributes)";
    assert_eq!(
        ev.set(&s, 10, betree::Value::Int(1))
            .unwrap_err()
            .to_string(),
        msg
    );
    assert_eq!(ev.unset(&s, 10).unwrap_err().to_string(), msg);
    assert!(s.get(10).is_none());
    assert_eq!(s.get(1).map(|d| d.name.as_str()), Some("i"));
}

#[test]
fn json_domain_file_errors() {
    use betree::domain::domains_from_json;
    let e = |t: &str| domains_from_json(t).unwrap_err().to_string();
    let ok = domains_from_json(
        r#"[{"name": "age", "type": "integer", "allow_undefined": false, "min": 0, "max": 120},
            {"name": "f", "type": "float", "allow_undefined": true, "min": -1, "max": 1.5},
            {"name": "tags", "type": "string_list", "allow_undefined": true, "max_strings": 3},
            {"name": "b", "type": "boolean", "allow_undefined": true}]"#,
    )
    .unwrap();
    assert_eq!(
        ok,
        vec![
            Domain::new("age", AttrType::Int, false).with_bounds(Bounds::Int(0, 120)),
            Domain::new("f", AttrType::Float, true).with_bounds(Bounds::Float(-1.0, 1.5)),
            Domain::new("tags", AttrType::StrList, true).with_bounds(Bounds::MaxStrings(3)),
            Domain::new("b", AttrType::Bool, true),
        ]
    );
    assert_eq!(
        e("[{\"name\": \"a\",\n \"type\": }]"),
        "domain file line 2, column 10: invalid JSON: expected value"
    );
    assert_eq!(
        e(r#"{"name": "a"}"#),
        "domain error: the JSON domain file must be an array of domain objects"
    );
    assert_eq!(e("[1]"), "domain error: domain 1: expected an object");
    assert_eq!(
        e(r#"[{"type": "integer", "allow_undefined": true}]"#),
        "domain error: domain 1: needs a string \"name\""
    );
    assert_eq!(
        e(r#"[{"name": "a", "allow_undefined": true}]"#),
        "domain error: domain 1 (`a`): needs a string \"type\""
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "int32", "allow_undefined": true}]"#),
        "domain error: domain 1 (`a`): unknown type \"int32\""
    );
    // The Erlang domain list requires the flag; so does the JSON one.
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer"}]"#),
        "domain error: domain 1 (`a`): needs \"allow_undefined\": true or false"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer", "allow_undefined": true, "minimum": 0}]"#),
        "domain error: domain 1 (`a`): unknown field \"minimum\" (expected name, type, allow_undefined, min, max, max_strings)"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer", "allow_undefined": true, "min": 0}]"#),
        "domain error: domain 1 (`a`): \"min\" and \"max\" go together"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer", "allow_undefined": true, "min": 5, "max": 1}]"#),
        "domain error: domain 1 (`a`): \"min\" 5 is above \"max\" 1"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer", "allow_undefined": true, "min": 0.5, "max": 1}]"#),
        "domain error: domain 1 (`a`): the bounds of an integer attribute must be integers"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "float", "allow_undefined": true, "min": 2, "max": 1.5}]"#),
        "domain error: domain 1 (`a`): \"min\" 2 is above \"max\" 1.5"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "float", "allow_undefined": true, "min": "x", "max": 1.5}]"#),
        "domain error: domain 1 (`a`): the bounds of a float attribute must be numbers"
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "string", "allow_undefined": true, "min": 0, "max": 1}]"#),
        "domain error: domain 1 (`a`): a string attribute takes no \"min\"/\"max\""
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "integer", "allow_undefined": true, "max_strings": 3}]"#),
        "domain error: domain 1 (`a`): an integer attribute takes no \"max_strings\""
    );
    assert_eq!(
        e(r#"[{"name": "a", "type": "string", "allow_undefined": true, "max_strings": -3}]"#),
        "domain error: domain 1 (`a`): \"max_strings\" must be a non-negative integer"
    );
    assert_eq!(
        e(
            r#"[{"name": "a", "type": "integer", "allow_undefined": true, "min": 0, "max": 1, "max_strings": 3}]"#
        ),
        "domain error: domain 1 (`a`): has both \"min\"/\"max\" and \"max_strings\""
    );
}

#[test]
fn erlang_domain_bounds_must_fit() {
    use betree::reference::read_expr_file;
    let e = |t: &str| read_expr_file(t).unwrap_err().to_string();
    assert_eq!(
        e("[{a,int,allow_undefined,5,1}]."),
        "domain list line 1, column 1: bounds of `a` do not fit its type integer (integers or numbers min, max with min <= max; a count of strings)"
    );
    assert_eq!(
        e("[{a,float,allow_undefined,2.5,1}]."),
        "domain list line 1, column 1: bounds of `a` do not fit its type float (integers or numbers min, max with min <= max; a count of strings)"
    );
    assert_eq!(
        e("[{a,bool,allow_undefined,0,1}]."),
        "domain list line 1, column 1: bounds of `a` do not fit its type boolean (integers or numbers min, max with min <= max; a count of strings)"
    );
}

/// One huge expression is refused by its size, a typed error, before it is
/// parsed: parsed, it took ~30 bytes per byte and a 90 MB one aborted the
/// process under a 4 GB address-space cap.
#[test]
fn an_expression_over_16_mib_is_an_error_not_an_abort() {
    let big = "b or ".repeat((16 << 20) / 5 + 1) + "b";
    assert_eq!(
        err(&big),
        format!(
            "parse error at column 1: expected an expression of at most 16777216 bytes, \
             found {} bytes",
            big.len()
        )
    );
}
