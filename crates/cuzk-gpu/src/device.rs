//! Finding and choosing GPUs.

use std::ffi::{c_char, CStr};

use crate::sys::cuda;
use crate::GpuError;

/// How many usable GPUs (compute capability 7.0+, cooperative launch) this process sees.
pub fn count() -> Result<usize, GpuError> {
    let mut n = 0usize;
    cuda!(0, cuzk_gpu_count(&mut n))?;
    Ok(n)
}

/// One GPU, chosen by ordinal among the usable ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    ordinal: usize,
    name: String,
    compute_capability: u32,
    total_memory: usize,
}

impl Device {
    /// Opens GPU `ordinal`; a typed error if there is no such GPU or no CUDA at all.
    pub fn open(ordinal: usize) -> Result<Device, GpuError> {
        let count = count()?;
        if ordinal >= count {
            return Err(GpuError::BadOrdinal { ordinal, count });
        }
        let (name, sm, _, total) = info(ordinal, false)?;
        Ok(Device {
            ordinal,
            name,
            compute_capability: sm,
            total_memory: total,
        })
    }

    /// Every usable GPU, in ordinal order.
    pub fn all() -> Result<Vec<Device>, GpuError> {
        (0..count()?).map(Device::open).collect()
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub(crate) fn id(&self) -> i32 {
        self.ordinal as i32
    }

    /// The marketing name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability as major·10 + minor (90 for Hopper).
    pub fn compute_capability(&self) -> u32 {
        self.compute_capability
    }

    pub fn total_memory(&self) -> usize {
        self.total_memory
    }

    /// Device memory free, in bytes, once the device's queued work is done and the
    /// allocator pool's cached blocks are returned: what is really in use. Waits for the GPU.
    pub fn free_memory(&self) -> Result<usize, GpuError> {
        Ok(info(self.ordinal, true)?.2)
    }

    /// Whether the allocator pool keeps the blocks each proof frees (what a [`GpuBackend`]
    /// sets: the next proof then maps no memory, 40 ms of a 32 GiB partition on an H100), or
    /// returns them to the driver at every synchronisation (CUDA's default). Uploads and
    /// [`Device::free_memory`] return what the pool holds first either way.
    ///
    /// [`GpuBackend`]: crate::GpuBackend
    pub fn keep_pool(&self, keep: bool) -> Result<(), GpuError> {
        cuda!(self.ordinal, cuzk_gpu_keep_pool(self.id(), keep as i32))
    }

    /// Device memory free right now, as the driver reports it (blocks the allocator pool
    /// keeps cached count as used). Does not wait for work in flight: for status polling.
    pub fn free_memory_now(&self) -> Result<usize, GpuError> {
        Ok(info(self.ordinal, false)?.2)
    }
}

fn info(ordinal: usize, settle: bool) -> Result<(String, u32, usize, usize), GpuError> {
    let mut name = [0 as c_char; 256];
    let (mut sm, mut free, mut total) = (0i32, 0usize, 0usize);
    cuda!(
        ordinal,
        cuzk_gpu_info(
            ordinal as i32,
            name.as_mut_ptr(),
            &mut sm,
            &mut free,
            &mut total,
            settle as i32
        )
    )?;
    // SAFETY: the C side NUL-terminates `name` (snprintf into 256 bytes).
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    Ok((name, sm as u32, free, total))
}
