//! Which partition runs next: the most urgent priority first, first come first served within a
//! priority, one partition at a time so an urgent job overtakes the rest of a long one.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::job::{JobId, Priority};

#[derive(Debug)]
struct Pending {
    key: (Reverse<Priority>, u64),
    partitions: VecDeque<usize>,
}

impl Pending {
    fn critical(&self) -> bool {
        self.key.0 .0 == Priority::Critical
    }
}

/// Jobs with partitions still to dispatch.
#[derive(Debug, Default)]
pub struct Scheduler {
    order: BTreeMap<(Reverse<Priority>, u64), JobId>,
    jobs: HashMap<JobId, Pending>,
    seq: u64,
    /// Critical partitions queued (what the CPU workers may make past their look-ahead).
    critical: usize,
}

impl Scheduler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `partitions` of `job` behind every job of its priority already queued.
    pub fn push(
        &mut self,
        job: JobId,
        priority: Priority,
        partitions: impl IntoIterator<Item = usize>,
    ) {
        let partitions: VecDeque<usize> = partitions.into_iter().collect();
        if partitions.is_empty() || self.jobs.contains_key(&job) {
            return;
        }
        self.seq += 1;
        if priority == Priority::Critical {
            self.critical += partitions.len();
        }
        let key = (Reverse(priority), self.seq);
        self.order.insert(key, job);
        self.jobs.insert(job, Pending { key, partitions });
    }

    /// The partition that should run next.
    pub fn peek(&self) -> Option<(JobId, usize)> {
        let (_, &job) = self.order.first_key_value()?;
        Some((job, self.jobs[&job].partitions[0]))
    }

    /// Takes the partition [`Scheduler::peek`] names.
    pub fn pop(&mut self) -> Option<(JobId, usize)> {
        let (job, partition) = self.peek()?;
        let p = self.jobs.get_mut(&job).expect("ordered jobs are pending");
        p.partitions.pop_front();
        if p.critical() {
            self.critical -= 1;
        }
        if p.partitions.is_empty() {
            self.remove(job);
        }
        Some((job, partition))
    }

    /// Drops every partition of `job` still queued; true if there were any.
    pub fn remove(&mut self, job: JobId) -> bool {
        match self.jobs.remove(&job) {
            Some(p) => {
                self.order.remove(&p.key);
                if p.critical() {
                    self.critical -= p.partitions.len();
                }
                true
            }
            None => false,
        }
    }

    /// Jobs ahead of `job`, if it is queued.
    pub fn position(&self, job: JobId) -> Option<usize> {
        let key = self.jobs.get(&job)?.key;
        Some(self.order.range(..key).count())
    }

    pub fn contains(&self, job: JobId) -> bool {
        self.jobs.contains_key(&job)
    }

    /// Critical partitions still queued.
    pub fn critical(&self) -> usize {
        self.critical
    }

    /// Number of jobs with partitions queued.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn urgent_jobs_overtake_between_partitions() {
        let mut s = Scheduler::new();
        s.push(JobId(1), Priority::Normal, 0..3);
        assert_eq!(s.pop(), Some((JobId(1), 0)));
        s.push(JobId(2), Priority::Critical, 0..1);
        s.push(JobId(3), Priority::Normal, 0..1);
        assert_eq!(s.position(JobId(3)), Some(2));
        let order: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(
            order,
            [(JobId(2), 0), (JobId(1), 1), (JobId(1), 2), (JobId(3), 0)]
        );
        assert!(s.is_empty());
    }

    #[derive(Clone, Debug)]
    enum Op {
        Push(Priority, usize),
        Pop,
        Cancel(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (prop::sample::select(Priority::ALL.to_vec()), 1usize..4)
                .prop_map(|(p, n)| Op::Push(p, n)),
            Just(Op::Pop),
            Just(Op::Pop),
            (0usize..64).prop_map(Op::Cancel),
        ]
    }

    proptest! {
        /// Against a model: every pop is the most urgent queued partition, FIFO within a
        /// priority, partitions of a job in order, cancelled jobs never come out, and the
        /// critical count is the critical partitions queued.
        #[test]
        fn pops_follow_priority_then_fifo(ops in prop::collection::vec(op(), 1..80)) {
            let mut s = Scheduler::new();
            // Model: (priority, submission, job, remaining partitions).
            let mut model: Vec<(Priority, u64, JobId, VecDeque<usize>)> = Vec::new();
            let mut next = 0u64;
            for op in ops {
                match op {
                    Op::Push(p, n) => {
                        next += 1;
                        s.push(JobId(next), p, 0..n);
                        model.push((p, next, JobId(next), (0..n).collect()));
                    }
                    Op::Pop => {
                        model.sort_by_key(|(p, seq, _, _)| (Reverse(*p), *seq));
                        let want = model.first_mut().map(|(_, _, j, parts)| (*j, parts.pop_front().unwrap()));
                        model.retain(|(_, _, _, parts)| !parts.is_empty());
                        prop_assert_eq!(s.pop(), want);
                    }
                    Op::Cancel(i) => {
                        let job = JobId(i as u64);
                        let had = model.iter().any(|(_, _, j, _)| *j == job);
                        model.retain(|(_, _, j, _)| *j != job);
                        prop_assert_eq!(s.remove(job), had);
                    }
                }
                prop_assert_eq!(s.len(), model.len());
                let critical: usize = model
                    .iter()
                    .filter(|(p, ..)| *p == Priority::Critical)
                    .map(|(.., parts)| parts.len())
                    .sum();
                prop_assert_eq!(s.critical(), critical);
            }
        }
    }
}
