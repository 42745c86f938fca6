//! The counting allocator counts: installed in this test binary, it sees one
//! allocation as one and none where there is none.

use perfkit_testkit::alloc_count::{Counting, allocations, installed};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_counter_sees_allocations_and_only_them() {
    assert!(installed());
    assert_eq!(allocations(|| std::hint::black_box(())), 0);
    assert_eq!(
        allocations(|| {
            let mut v = std::hint::black_box(Vec::<u8>::with_capacity(1));
            v.extend_from_slice(&[0; 4096]);
            drop(v);
        }),
        2,
        "one allocation and one reallocation"
    );
}
