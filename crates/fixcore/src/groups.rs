//! Repeating-group definitions and Length/Data field pairs: the parts of a
//! FIX data dictionary the parser needs. Without the groups a repeated tag
//! cannot be told apart from a duplicate; without the pairs a data value
//! holding SOH or `=` cannot be told apart from the fields after it.

use crate::{Error, Result};

/// Tags below this bound are looked up by direct indexing.
pub(crate) const DIRECT_TAGS: usize = 10_000;

/// The Length/Data pairs of FIX 4.4, as (length tag, data tag): every
/// field of type DATA in QuickFIX's `FIX44.xml` with the LENGTH field that
/// precedes it. FIX 4.2 has the same pairs less the last two; FIX 5.0 adds
/// more (read them from its dictionary with
/// [`Dictionary::with_data_pairs`] and
/// the QuickFIX dictionary's `DataDictionary::data_pairs`).
pub const STANDARD_DATA_PAIRS: [(u32, u32); 16] = [
    (90, 91),   // SecureDataLen, SecureData
    (93, 89),   // SignatureLength, Signature
    (95, 96),   // RawDataLength, RawData
    (212, 213), // XmlDataLen, XmlData
    (348, 349), // EncodedIssuerLen, EncodedIssuer
    (350, 351), // EncodedSecurityDescLen, EncodedSecurityDesc
    (352, 353), // EncodedListExecInstLen, EncodedListExecInst
    (354, 355), // EncodedTextLen, EncodedText
    (356, 357), // EncodedSubjectLen, EncodedSubject
    (358, 359), // EncodedHeadlineLen, EncodedHeadline
    (360, 361), // EncodedAllocTextLen, EncodedAllocText
    (362, 363), // EncodedUnderlyingIssuerLen, EncodedUnderlyingIssuer
    (364, 365), // EncodedUnderlyingSecurityDescLen, EncodedUnderlyingSecurityDesc
    (445, 446), // EncodedListStatusTextLen, EncodedListStatusText
    (618, 619), // EncodedLegIssuerLen, EncodedLegIssuer
    (621, 622), // EncodedLegSecurityDescLen, EncodedLegSecurityDesc
];

/// Largest tag the parser reads (9 digits).
const MAX_TAG: u32 = 999_999_999;

/// One repeating group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDef {
    /// The NoXXX tag carrying the entry count.
    pub count_tag: u32,
    /// The tag every entry must start with.
    pub delimiter: u32,
    /// Tags an entry may contain (the delimiter and nested count tags
    /// included); at most 64.
    pub members: Vec<u32>,
}

/// The bit of a [`Dictionary::member_slots`] slot marking a member that
/// counts a nested group (member indexes are below 64).
pub(crate) const NESTED: u8 = 0x80;

/// A set of repeating-group definitions, indexed by count tag, and the
/// Length/Data field pairs.
#[derive(Debug, Clone)]
pub struct Dictionary {
    groups: Vec<GroupDef>,
    /// (length tag, data tag), sorted by length tag; few enough that a
    /// search costs less than a map, and only fields the parser's tag
    /// table flags are looked up.
    data: Vec<(u32, u32)>,
    /// Per group: (smallest member tag, `slot[tag - min]` = member index + 1
    /// or 0, with [`NESTED`] for a member that counts a group of its own),
    /// so membership and nesting are one indexed load, not a list search
    /// and a second lookup.
    members: Vec<(u32, Vec<u8>)>,
    /// `by_count[tag]` = group index + 1, or 0.
    by_count: Vec<u16>,
}

impl Default for Dictionary {
    fn default() -> Self {
        Dictionary::fix44()
    }
}

impl Dictionary {
    /// No groups (every repeated tag is a duplicate) and no Length/Data
    /// pairs (every value ends at the first SOH).
    pub fn empty() -> Dictionary {
        Dictionary {
            groups: Vec::new(),
            data: Vec::new(),
            members: Vec::new(),
            by_count: vec![0; DIRECT_TAGS],
        }
    }

    /// The common FIX 4.4 groups the benchmarks and tests use: MDEntries
    /// (268), Parties (453) with nested PartySubIDs (802), RelatedSym (146),
    /// Allocs (78), MiscFees (136), ContraBrokers (382), MDReqGrp entry types
    /// (267), SecurityAltID (454), Events (864), LegSecurity (555),
    /// NestedParties (539), Stipulations (232) and RoutingIDs (215); and
    /// the [`STANDARD_DATA_PAIRS`].
    pub fn fix44() -> Dictionary {
        let defs: &[(u32, u32, &[u32])] = &[
            (
                268,
                269,
                &[
                    269, 270, 15, 1023, 271, 272, 273, 274, 275, 336, 625, 276, 277, 282, 283, 284,
                    286, 287, 288, 289, 290, 291, 292, 451, 279, 278, 280, 55, 48, 22, 346, 290,
                    58, 453, 37,
                ],
            ),
            (453, 448, &[448, 447, 452, 802]),
            (802, 523, &[523, 803]),
            (
                146,
                55,
                &[55, 65, 48, 22, 454, 460, 167, 200, 207, 15, 38, 54, 453],
            ),
            (78, 79, &[79, 661, 736, 467, 80, 539]),
            (539, 524, &[524, 525, 538, 804]),
            (804, 545, &[545, 805]),
            (136, 137, &[137, 138, 139, 891]),
            (382, 375, &[375, 337, 437, 438, 655]),
            (267, 269, &[269]),
            (454, 455, &[455, 456]),
            (864, 865, &[865, 866, 867, 868]),
            (
                555,
                600,
                &[
                    600, 601, 602, 603, 604, 607, 608, 609, 610, 611, 612, 613, 614, 615, 616, 617,
                    618, 619, 620, 623, 624, 556, 740, 739, 955, 956, 564, 565, 566, 587, 588, 637,
                    654, 539,
                ],
            ),
            (232, 233, &[233, 234]),
            (215, 216, &[216, 217]),
        ];
        let mut d = Dictionary::empty();
        for (count_tag, delimiter, members) in defs {
            let mut m: Vec<u32> = members.to_vec();
            m.sort_unstable();
            m.dedup();
            d = d
                .with_group(GroupDef {
                    count_tag: *count_tag,
                    delimiter: *delimiter,
                    members: m,
                })
                .unwrap_or_else(|_| unreachable!("built-in group definitions are valid"));
        }
        d.with_data_pairs(STANDARD_DATA_PAIRS)
            .unwrap_or_else(|_| unreachable!("the standard data pairs are valid"))
    }

    /// Replaces the Length/Data pairs with `pairs` (length tag, data tag):
    /// a data field's value is then read as exactly as many bytes as the
    /// Length field just before it says, SOH and `=` included. Fails if a
    /// tag is 0, above 999,999,999, a session tag (8, 9, 10, 35), a group
    /// count, or in more than one pair (or both halves of one).
    pub fn with_data_pairs(
        mut self,
        pairs: impl IntoIterator<Item = (u32, u32)>,
    ) -> Result<Dictionary> {
        let mut data: Vec<(u32, u32)> = pairs.into_iter().collect();
        let mut tags: Vec<u32> = data.iter().flat_map(|&(l, d)| [l, d]).collect();
        if tags.iter().any(|&t| t == 0 || t > MAX_TAG) {
            return Err(Error::Build("data pair tags must be in 1..=999999999"));
        }
        if tags.iter().any(|t| matches!(t, 8 | 9 | 10 | 35)) {
            return Err(Error::Build(
                "tags 8, 9, 10 and 35 cannot be in a Length/Data pair",
            ));
        }
        if tags.iter().any(|&t| self.group(t).is_some()) {
            return Err(Error::Build(
                "a repeating group's count tag cannot be in a Length/Data pair",
            ));
        }
        tags.sort_unstable();
        if tags.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::Build(
                "a tag may be in one Length/Data pair only, as one of its halves",
            ));
        }
        data.sort_unstable();
        self.data = data;
        Ok(self)
    }

    /// The Length/Data pairs, (length tag, data tag), by length tag.
    pub fn data_pairs(&self) -> &[(u32, u32)] {
        &self.data
    }

    /// Adds (or replaces) a group. Fails if the count tag is not below
    /// 10,000, the delimiter is not a member, or there are more than 64
    /// members or a member is a session-level tag (8, 9, 10, 35).
    pub fn with_group(mut self, mut def: GroupDef) -> Result<Dictionary> {
        if def.count_tag == 0 || def.count_tag as usize >= DIRECT_TAGS {
            return Err(Error::Build("group count tag must be in 1..10000"));
        }
        if !def.members.contains(&def.delimiter) {
            def.members.insert(0, def.delimiter);
        }
        if def.members.len() > 64 {
            return Err(Error::Build("a group may have at most 64 member tags"));
        }
        if def.members.iter().any(|&t| t == 0 || t >= 1 << 20) {
            return Err(Error::Build("group member tags must be in 1..2^20"));
        }
        if def.members.iter().any(|t| matches!(t, 8 | 9 | 10 | 35)) {
            return Err(Error::Build("tags 8, 9, 10 and 35 cannot be group members"));
        }
        if self.data_role(def.count_tag).is_some() {
            return Err(Error::Build(
                "a tag of a Length/Data pair cannot count a repeating group",
            ));
        }
        let min = def.members.iter().copied().min().unwrap_or(0);
        let max = def.members.iter().copied().max().unwrap_or(0);
        let mut lookup = vec![0u8; (max - min) as usize + 1];
        for (k, &m) in def.members.iter().enumerate() {
            // A group listing its own count tag does not nest in itself.
            let nested = m != def.count_tag && self.group_index(m).is_some();
            lookup[(m - min) as usize] = (k as u8 + 1) | if nested { NESTED } else { 0 };
        }
        let count_tag = def.count_tag;
        let slot = &mut self.by_count[count_tag as usize];
        let g = if *slot != 0 {
            let g = *slot as usize - 1;
            self.groups[g] = def;
            self.members[g] = (min, lookup);
            g
        } else {
            self.groups.push(def);
            self.members.push((min, lookup));
            *slot = self.groups.len() as u16;
            self.groups.len() - 1
        };
        // This count tag, a member of groups defined before it, nests there.
        for (_, (min, lookup)) in self.members.iter_mut().enumerate().filter(|&(h, _)| h != g) {
            let at = count_tag
                .checked_sub(*min)
                .and_then(|o| lookup.get_mut(o as usize));
            if let Some(s) = at.filter(|s| **s != 0) {
                *s |= NESTED;
            }
        }
        Ok(self)
    }

    /// The group whose count tag is `tag`.
    #[inline]
    pub fn group(&self, tag: u32) -> Option<&GroupDef> {
        match self.by_count.get(tag as usize) {
            Some(&i) if i != 0 => Some(&self.groups[i as usize - 1]),
            _ => None,
        }
    }
}

impl Dictionary {
    /// Index of the group counted by `tag`.
    #[inline]
    pub(crate) fn group_index(&self, tag: u32) -> Option<usize> {
        match self.by_count.get(tag as usize) {
            Some(&i) if i != 0 => Some(i as usize - 1),
            _ => None,
        }
    }

    /// The definition of group `g` (an index from [`Self::group_index`]).
    #[inline]
    pub(crate) fn def(&self, g: usize) -> &GroupDef {
        &self.groups[g]
    }

    /// The role of `tag` in a Length/Data pair: `Some(Ok(data tag))` for a
    /// Length field, `Some(Err(length tag))` for a data field.
    #[inline]
    pub(crate) fn data_role(&self, tag: u32) -> Option<std::result::Result<u32, u32>> {
        if let Some(&(_, d)) = self.data.iter().find(|&&(l, _)| l == tag) {
            return Some(Ok(d));
        }
        self.data
            .iter()
            .find(|&&(_, d)| d == tag)
            .map(|&(l, _)| Err(l))
    }

    /// Whether a Length/Data pair has a tag the parser's direct table does
    /// not cover (so its split must look such tags up).
    pub(crate) fn has_high_data_tags(&self) -> bool {
        self.data
            .iter()
            .any(|&(l, d)| l.max(d) as usize >= DIRECT_TAGS)
    }

    /// Group `g`'s members as the parser reads them: the smallest member
    /// tag, and by tag from it, the member's index + 1 (0 for a tag that
    /// is no member), with [`NESTED`] set for a member that counts a group
    /// of its own.
    #[inline]
    pub(crate) fn member_slots(&self, g: usize) -> (u32, &[u8]) {
        let (min, lookup) = &self.members[g];
        (*min, lookup)
    }
}
