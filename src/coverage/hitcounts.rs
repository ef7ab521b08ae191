//! The coverage map observer: AFL's hit-count buckets, applied only where the map is non-zero.
//!
//! LibAFL's `HitcountsMapObserver` rewrites every byte of the map after every execution; an
//! execution touches a few hundred of a large target's tens of thousands of counters, so that
//! rewrite took 16% of a font-shaping harness's time (35,000 counters). Like AFL++'s
//! `classify_counts`, this skips zero counters a block at a time and looks up only the rest.

use std::{
    borrow::Cow,
    hash::{Hash, Hasher},
    ops::{Deref, DerefMut},
};

use libafl::{
    executors::ExitKind,
    observers::{ExplicitTracking, MapObserver, Observer},
    Error,
};
use libafl_bolts::{HasLen, Named, ToSlice, ToSliceMut, Truncate};
use serde::{Deserialize, Serialize};

use crate::coverage::buckets::{classify, hash_non_zero};

/// A map observer whose counts are bucketed into hit-count classes after each execution.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct HitcountsObserver<M> {
    base: M,
    /// The map's hash, from the pass that bucketed it (None: the map changed since).
    #[serde(skip)]
    hash: Option<u64>,
    /// The blocks that pass found not all zero.
    #[serde(skip)]
    touched: Vec<u32>,
}

/// The hash of the path an execution took: of its bucketed map, equal for equal maps.
pub trait PathHash {
    fn path_hash(&self) -> u64;
}

impl<M> PathHash for HitcountsObserver<M>
where
    M: for<'a> ToSlice<'a, Entry = u8>,
{
    fn path_hash(&self) -> u64 {
        self.hash
            .unwrap_or_else(|| hash_non_zero(&self.base.to_slice()))
    }
}

impl<T: PathHash, const INDEXES: bool, const NOVELTIES: bool> PathHash
    for ExplicitTracking<T, INDEXES, NOVELTIES>
{
    fn path_hash(&self) -> u64 {
        self.as_ref().path_hash()
    }
}

impl<M> Hash for HitcountsObserver<M>
where
    M: for<'a> ToSlice<'a, Entry = u8>,
{
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        hasher.write_u64(self.path_hash());
    }
}

impl<M> HitcountsObserver<M> {
    pub fn new(base: M) -> Self {
        Self {
            base,
            hash: None,
            touched: Vec::new(),
        }
    }

    /// After an execution, the indices of the blocks of [`BLOCK`](crate::coverage::buckets::BLOCK) counters that are not all
    /// zero (the counters after the last whole block are not listed); None when the map may
    /// have changed since it was bucketed.
    pub fn touched_blocks(&self) -> Option<&[u32]> {
        self.hash.is_some().then_some(&self.touched)
    }
}

impl<M> Deref for HitcountsObserver<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.base
    }
}

impl<M> DerefMut for HitcountsObserver<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.base
    }
}

impl<I, S, M> Observer<I, S> for HitcountsObserver<M>
where
    M: MapObserver<Entry = u8> + Observer<I, S> + for<'a> ToSliceMut<'a, Entry = u8>,
{
    fn flush(&mut self) -> Result<(), Error> {
        self.base.flush()
    }

    fn pre_exec(&mut self, state: &mut S, input: &I) -> Result<(), Error> {
        self.hash = None;
        self.base.pre_exec(state, input)
    }

    fn post_exec(&mut self, state: &mut S, input: &I, exit_kind: &ExitKind) -> Result<(), Error> {
        self.hash = Some(classify(&mut self.base.to_slice_mut(), &mut self.touched));
        self.base.post_exec(state, input, exit_kind)
    }
}

impl<M: Named> Named for HitcountsObserver<M> {
    fn name(&self) -> &Cow<'static, str> {
        self.base.name()
    }
}

impl<M: HasLen> HasLen for HitcountsObserver<M> {
    fn len(&self) -> usize {
        self.base.len()
    }
}

impl<M> AsRef<Self> for HitcountsObserver<M> {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl<M> AsMut<Self> for HitcountsObserver<M> {
    fn as_mut(&mut self) -> &mut Self {
        self
    }
}

impl<M: MapObserver<Entry = u8>> MapObserver for HitcountsObserver<M> {
    type Entry = u8;

    fn initial(&self) -> u8 {
        self.base.initial()
    }
    fn usable_count(&self) -> usize {
        self.base.usable_count()
    }
    fn get(&self, idx: usize) -> u8 {
        self.base.get(idx)
    }
    fn set(&mut self, idx: usize, val: u8) {
        self.hash = None;
        self.base.set(idx, val);
    }
    fn count_bytes(&self) -> u64 {
        self.base.count_bytes()
    }
    fn reset_map(&mut self) -> Result<(), Error> {
        self.hash = None;
        self.base.reset_map()
    }
    fn to_vec(&self) -> Vec<u8> {
        self.base.to_vec()
    }
    fn how_many_set(&self, indexes: &[usize]) -> usize {
        self.base.how_many_set(indexes)
    }
}

impl<'a, M: ToSlice<'a>> ToSlice<'a> for HitcountsObserver<M> {
    type Entry = <M as ToSlice<'a>>::Entry;
    type SliceRef = <M as ToSlice<'a>>::SliceRef;
    fn to_slice(&'a self) -> Self::SliceRef {
        self.base.to_slice()
    }
}

impl<'a, M: ToSliceMut<'a>> ToSliceMut<'a> for HitcountsObserver<M> {
    type SliceRefMut = <M as ToSliceMut<'a>>::SliceRefMut;
    fn to_slice_mut(&'a mut self) -> Self::SliceRefMut {
        self.base.to_slice_mut()
    }
}

/// The fork server shrinks the map to the size a standalone target reports.
impl<M> Truncate for HitcountsObserver<M>
where
    M: Named + Serialize + serde::de::DeserializeOwned + Truncate,
{
    fn truncate(&mut self, new_len: usize) {
        self.base.truncate(new_len);
    }
}
