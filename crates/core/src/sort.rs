//! Stable sorts for short lists and cold paths, through one shared copy of the sort code.
//!
//! `slice::sort_by` is generic over the element type and the comparison: every call site with a
//! closure of its own gets its own copy of the standard library's sort (3–5 KB of WebAssembly
//! each; the page carried about thirty, and each `collect` into a `BTreeMap` or `serde_json::Map`
//! brings one more). These functions sort a list of indices with the comparison behind `&mut dyn`,
//! so the sort itself is compiled once, then move the elements into that order.
//!
//! The order is exactly `slice::sort_by`'s for a comparison that is a total order (both sorts are
//! stable: elements that compare equal keep the order they had). Hot loops, where the extra list
//! of indices and the indirect calls cost time, keep `slice::sort_by`.

use std::cmp::Ordering;

/// `v` sorted stably by `compare`, as `v.sort_by(compare)` sorts it.
pub fn sort_by<T>(v: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let order = stable_order(v.len(), &mut |a, b| compare(&v[a], &v[b]));
    permute(v, &order);
}

/// `v` sorted stably by `key`, as `v.sort_by_key(key)` sorts it.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// `v` sorted stably in ascending order, as `v.sort()` sorts it.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// A `serde_json` object with the entries of `pairs` (for a key given twice, the last value), as
/// `pairs.collect::<serde_json::Map<_, _>>()` builds it, without a sort of its own per call site:
/// the entries are inserted one by one (the map keeps its keys in order).
pub fn json_object(
    pairs: impl IntoIterator<Item = (String, serde_json::Value)>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// The indices `0..n` in the order that sorts the elements stably by `compare` (on indices).
#[inline(never)]
fn stable_order(n: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Moves the elements of `v` so that position `k` holds what position `order[k]` held (`order` a
/// permutation of `0..v.len()`), in place: the element meant for `k` is found by following the
/// earlier swaps, which moved each element that stood at a position `j < k` to `order[j]`'s place.
fn permute<T>(v: &mut [T], order: &[usize]) {
    for k in 0..v.len() {
        let mut from = order[k];
        while from < k {
            from = order[from];
        }
        v.swap(k, from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the test needs no crate.
    fn numbers(seed: u64, n: usize, below: u64) -> Vec<u64> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % below
            })
            .collect()
    }

    #[test]
    fn the_order_is_the_standard_stable_sorts() {
        for seed in 1..300u64 {
            let n = (seed % 40) as usize;
            // Pairs whose first halves repeat: stability decides the order of the second halves.
            let keys = numbers(seed, n, 5);
            let v: Vec<(u64, usize)> = keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            let mut ours = v.clone();
            sort_by_key(&mut ours, |p| p.0);
            let mut std = v.clone();
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std, "seed {seed}");
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            let mut std = v.clone();
            std.sort_by(|a, b| b.0.cmp(&a.0));
            assert_eq!(ours, std, "seed {seed}");
        }
    }

    #[test]
    fn strings_move_without_copies_or_losses() {
        let mut v: Vec<String> = ["pear", "apple", "fig", "apple", "kiwi"].map(String::from).to_vec();
        sort(&mut v);
        assert_eq!(v, ["apple", "apple", "fig", "kiwi", "pear"]);
        let mut empty: Vec<String> = Vec::new();
        sort(&mut empty);
        assert!(empty.is_empty());
    }

    #[test]
    fn an_object_keeps_the_last_of_two_equal_keys_as_collect_does() {
        let pairs = || vec![("b".to_string(), 1.into()), ("a".to_string(), 2.into()), ("b".to_string(), 3.into())];
        let ours = json_object(pairs());
        let collected: serde_json::Map<String, serde_json::Value> = pairs().into_iter().collect();
        assert_eq!(ours, collected);
        assert_eq!(serde_json::to_string(&ours).unwrap(), r#"{"a":2,"b":3}"#);
    }
}
