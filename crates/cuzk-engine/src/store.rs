//! Durable job records in redb (an embedded, crash-safe, transactional key-value store).
//!
//! A request is committed (fsync'd) before `submit` returns; every partition proof is committed
//! as it is made, so a restart resumes a job where it stopped; a result stays until it is
//! collected or expires. One transaction per change keeps every record consistent.
//!
//! A failed write (a full disk, an I/O error) fails that one change and leaves the committed
//! records as they were; redb then refuses further transactions until the database is
//! reopened, so the store reopens it at the next transaction. Once the disk has room again
//! the engine goes on accepting and finishing jobs without a restart.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::job::{JobId, JobState, Priority, Request, Timings};

/// Job metadata as JSON (small; the payload and proofs live in their own tables).
const JOBS: TableDefinition<'_, u64, &str> = TableDefinition::new("jobs");
const PAYLOADS: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("payloads");
/// `(job, partition)` → 192-byte proof, while the job runs.
const PARTS: TableDefinition<'_, (u64, u32), &[u8]> = TableDefinition::new("partitions");
const RESULTS: TableDefinition<'_, u64, &[u8]> = TableDefinition::new("results");
/// Caller's request id → job, for idempotent submission.
const REQUESTS: TableDefinition<'_, &str, u64> = TableDefinition::new("requests");
const META: TableDefinition<'_, &str, u64> = TableDefinition::new("meta");
const NEXT_JOB: &str = "next_job";

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> StoreError {
    move |e| StoreError {
        what,
        message: e.to_string(),
    }
}

/// One job as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub request_id: String,
    pub kind: String,
    pub priority: Priority,
    pub state: JobState,
    /// Milliseconds since the Unix epoch.
    pub submitted_ms: u64,
    pub finished_ms: Option<u64>,
    /// How many times an engine restart found this job started but unfinished.
    pub restarts: u32,
    pub timings: Timings,
}

/// What [`Store::accept`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    New(JobId),
    /// The request id is known and names the same request.
    Existing(JobId),
    /// The request id is known for a different request.
    Conflict(JobId),
}

/// An unfinished or uncollected job found at start.
#[derive(Debug)]
pub struct Loaded {
    pub id: JobId,
    pub record: Record,
    /// Present while the job is unfinished.
    pub payload: Option<Vec<u8>>,
    /// Partition proofs already made.
    pub parts: Vec<(u32, Vec<u8>)>,
}

/// The job store of one engine.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    /// `None` only between dropping a failed database and opening it again.
    db: Mutex<Option<Database>>,
}

/// Whether redb refuses work until the database is reopened.
fn needs_reopen(e: &redb::StorageError) -> bool {
    matches!(e, redb::StorageError::PreviousIo)
}

impl Store {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(err("creating the store folder"))?;
        let path = dir.join("jobs.redb");
        let db = Self::open_db(&path)?;
        Ok(Store {
            path,
            db: Mutex::new(Some(db)),
        })
    }

    fn open_db(path: &Path) -> Result<Database, StoreError> {
        let db = Database::create(path).map_err(err("opening the store"))?;
        let txn = db.begin_write().map_err(err("begin"))?;
        {
            txn.open_table(JOBS).map_err(err("jobs table"))?;
            txn.open_table(PAYLOADS).map_err(err("payloads table"))?;
            txn.open_table(PARTS).map_err(err("partitions table"))?;
            txn.open_table(RESULTS).map_err(err("results table"))?;
            txn.open_table(REQUESTS).map_err(err("requests table"))?;
            txn.open_table(META).map_err(err("meta table"))?;
        }
        txn.commit().map_err(err("commit"))?;
        Ok(db)
    }

    /// Starts a transaction with `begin`, reopening the database first if an earlier I/O
    /// error left it refusing work.
    fn begin<T>(
        &self,
        begin: impl Fn(&Database) -> Result<T, redb::TransactionError>,
    ) -> Result<T, StoreError> {
        let mut db = self.db.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = db.as_ref() {
            match begin(d) {
                Err(redb::TransactionError::Storage(e)) if needs_reopen(&e) => {}
                other => return other.map_err(err("begin")),
            }
        }
        // redb holds a lock on the file: the old handle must be gone before the new one opens.
        *db = None;
        let reopened = Self::open_db(&self.path)?;
        begin(db.insert(reopened)).map_err(err("begin"))
    }

    /// Runs `f` in one write transaction and commits it durably.
    fn write<T>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let txn = self.begin(Database::begin_write)?;
        let out = f(&txn)?;
        txn.commit().map_err(err("commit"))?;
        Ok(out)
    }

    /// Records `req` as a new queued job, unless its request id is already known.
    pub fn accept(&self, req: &Request, now_ms: u64) -> Result<Accept, StoreError> {
        self.write(|txn| {
            let mut requests = txn.open_table(REQUESTS).map_err(err("requests"))?;
            let known = requests
                .get(req.request_id.as_str())
                .map_err(err("requests"))?
                .map(|g| JobId(g.value()));
            if let Some(id) = known {
                let same = read_record(txn, id)?
                    .is_some_and(|r| r.kind == req.kind && r.priority == req.priority)
                    && stored_payload_matches(txn, id, &req.payload)?;
                return Ok(if same {
                    Accept::Existing(id)
                } else {
                    Accept::Conflict(id)
                });
            }
            let mut meta = txn.open_table(META).map_err(err("meta"))?;
            let next = meta
                .get(NEXT_JOB)
                .map_err(err("meta"))?
                .map_or(1, |g| g.value());
            meta.insert(NEXT_JOB, next + 1).map_err(err("meta"))?;
            let id = JobId(next);
            requests
                .insert(req.request_id.as_str(), id.0)
                .map_err(err("requests"))?;
            let record = Record {
                request_id: req.request_id.clone(),
                kind: req.kind.clone(),
                priority: req.priority,
                state: JobState::Queued,
                submitted_ms: now_ms,
                finished_ms: None,
                restarts: 0,
                timings: Timings::default(),
            };
            write_record(txn, id, &record)?;
            txn.open_table(PAYLOADS)
                .map_err(err("payloads"))?
                .insert(id.0, req.payload.as_slice())
                .map_err(err("payloads"))?;
            Ok(Accept::New(id))
        })
    }

    /// Records a non-terminal state of an unfinished job.
    pub fn set_state(&self, id: JobId, state: &JobState) -> Result<(), StoreError> {
        self.write(|txn| update_unfinished(txn, id, state).map(drop))
    }

    /// Stores partition `k`'s proof and the progress it makes.
    pub fn put_partition(
        &self,
        id: JobId,
        k: u32,
        proof: &[u8],
        state: &JobState,
    ) -> Result<(), StoreError> {
        self.write(|txn| {
            if update_unfinished(txn, id, state)? {
                txn.open_table(PARTS)
                    .map_err(err("partitions"))?
                    .insert((id.0, k), proof)
                    .map_err(err("partitions"))?;
            }
            Ok(())
        })
    }

    /// Records a terminal state (and the result bytes of a success); drops what only an
    /// unfinished job needs.
    pub fn finish(
        &self,
        id: JobId,
        state: &JobState,
        result: Option<&[u8]>,
        timings: Timings,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.write(|txn| {
            let Some(mut r) = read_record(txn, id)? else {
                return Ok(());
            };
            r.state = state.clone();
            r.finished_ms = Some(now_ms);
            r.timings = timings;
            write_record(txn, id, &r)?;
            if let Some(bytes) = result {
                txn.open_table(RESULTS)
                    .map_err(err("results"))?
                    .insert(id.0, bytes)
                    .map_err(err("results"))?;
            }
            remove_work(txn, id)
        })
    }

    /// Forgets a job entirely (collected or expired); its request id becomes free again.
    pub fn remove(&self, id: JobId) -> Result<(), StoreError> {
        self.write(|txn| {
            if let Some(r) = read_record(txn, id)? {
                txn.open_table(REQUESTS)
                    .map_err(err("requests"))?
                    .remove(r.request_id.as_str())
                    .map_err(err("requests"))?;
            }
            txn.open_table(JOBS)
                .map_err(err("jobs"))?
                .remove(id.0)
                .map_err(err("jobs"))?;
            txn.open_table(RESULTS)
                .map_err(err("results"))?
                .remove(id.0)
                .map_err(err("results"))?;
            remove_work(txn, id)
        })
    }

    pub fn result(&self, id: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.begin(Database::begin_read)?;
        let t = txn.open_table(RESULTS).map_err(err("results"))?;
        let v = t.get(id.0).map_err(err("results"))?;
        Ok(v.map(|g| g.value().to_vec()))
    }

    /// Every job, for a restart. Jobs an earlier run had started get `restarts` counted up and
    /// go back to the queue, keeping their finished partitions.
    pub fn recover(&self) -> Result<Vec<Loaded>, StoreError> {
        self.write(|txn| {
            let jobs = txn.open_table(JOBS).map_err(err("jobs"))?;
            let mut records = Vec::new();
            for item in jobs.iter().map_err(err("jobs"))? {
                let (k, v) = item.map_err(err("jobs"))?;
                let r: Record = serde_json::from_str(v.value()).map_err(err("job record"))?;
                records.push((JobId(k.value()), r));
            }
            drop(jobs);
            let payloads = txn.open_table(PAYLOADS).map_err(err("payloads"))?;
            let parts = txn.open_table(PARTS).map_err(err("partitions"))?;
            let mut out = Vec::new();
            for (id, mut record) in records {
                if let JobState::Running { .. } = record.state {
                    record.restarts += 1;
                    record.state = JobState::Queued;
                    write_record(txn, id, &record)?;
                }
                let payload = payloads
                    .get(id.0)
                    .map_err(err("payloads"))?
                    .map(|g| g.value().to_vec());
                let mut done = Vec::new();
                for item in parts
                    .range((id.0, 0)..=(id.0, u32::MAX))
                    .map_err(err("partitions"))?
                {
                    let (k, v) = item.map_err(err("partitions"))?;
                    done.push((k.value().1, v.value().to_vec()));
                }
                out.push(Loaded {
                    id,
                    record,
                    payload,
                    parts: done,
                });
            }
            Ok(out)
        })
    }
}

fn read_record(txn: &redb::WriteTransaction, id: JobId) -> Result<Option<Record>, StoreError> {
    let t = txn.open_table(JOBS).map_err(err("jobs"))?;
    let v = t.get(id.0).map_err(err("jobs"))?;
    v.map(|g| serde_json::from_str(g.value()).map_err(err("job record")))
        .transpose()
}

/// Sets the state of a job that is stored and not finished; false if there is no such job.
fn update_unfinished(
    txn: &redb::WriteTransaction,
    id: JobId,
    state: &JobState,
) -> Result<bool, StoreError> {
    match read_record(txn, id)? {
        Some(mut r) if !r.state.is_terminal() => {
            r.state = state.clone();
            write_record(txn, id, &r)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn write_record(txn: &redb::WriteTransaction, id: JobId, r: &Record) -> Result<(), StoreError> {
    let json = serde_json::to_string(r).map_err(err("job record"))?;
    txn.open_table(JOBS)
        .map_err(err("jobs"))?
        .insert(id.0, json.as_str())
        .map_err(err("jobs"))?;
    Ok(())
}

fn stored_payload_matches(
    txn: &redb::WriteTransaction,
    id: JobId,
    payload: &[u8],
) -> Result<bool, StoreError> {
    let t = txn.open_table(PAYLOADS).map_err(err("payloads"))?;
    let v = t.get(id.0).map_err(err("payloads"))?;
    // A finished job no longer has its payload; its request id alone identifies it then.
    Ok(v.map_or(true, |g| g.value() == payload))
}

fn remove_work(txn: &redb::WriteTransaction, id: JobId) -> Result<(), StoreError> {
    txn.open_table(PAYLOADS)
        .map_err(err("payloads"))?
        .remove(id.0)
        .map_err(err("payloads"))?;
    let mut parts = txn.open_table(PARTS).map_err(err("partitions"))?;
    parts
        .retain_in((id.0, 0)..=(id.0, u32::MAX), |_, _| false)
        .map_err(err("partitions"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: &str, payload: &[u8]) -> Request {
        Request {
            request_id: id.into(),
            kind: "synthetic".into(),
            priority: Priority::Normal,
            payload: payload.to_vec(),
        }
    }

    #[test]
    fn accept_is_idempotent_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = store.accept(&req("a", b"x"), 1).unwrap();
        assert_eq!(a, Accept::New(JobId(1)));
        assert_eq!(
            store.accept(&req("a", b"x"), 2).unwrap(),
            Accept::Existing(JobId(1))
        );
        assert_eq!(
            store.accept(&req("a", b"y"), 2).unwrap(),
            Accept::Conflict(JobId(1))
        );
        assert_eq!(
            store.accept(&req("b", b"x"), 3).unwrap(),
            Accept::New(JobId(2))
        );
        let running = JobState::Running { done: 1, total: 2 };
        store
            .put_partition(JobId(1), 0, &[7; 192], &running)
            .unwrap();
        store
            .finish(
                JobId(2),
                &JobState::Succeeded,
                Some(b"proof"),
                Timings::default(),
                9,
            )
            .unwrap();
        drop(store);

        let store = Store::open(dir.path()).unwrap();
        let jobs = store.recover().unwrap();
        assert_eq!(jobs.len(), 2);
        let one = &jobs[0];
        assert_eq!(
            (one.id, &one.record.state, one.record.restarts),
            (JobId(1), &JobState::Queued, 1)
        );
        assert_eq!(one.payload.as_deref(), Some(&b"x"[..]));
        assert_eq!(one.parts, vec![(0, vec![7; 192])]);
        assert_eq!(jobs[1].payload, None);
        assert_eq!(
            store.result(JobId(2)).unwrap().as_deref(),
            Some(&b"proof"[..])
        );
        store.remove(JobId(2)).unwrap();
        assert_eq!(store.result(JobId(2)).unwrap(), None);
        // A collected request id may be used again, for a new job.
        assert_eq!(
            store.accept(&req("b", b"z"), 4).unwrap(),
            Accept::New(JobId(3))
        );
    }
}
