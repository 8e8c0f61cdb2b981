//! Bits and 32-bit words as [`crate::boolean::Boolean`] and [`crate::uint32::UInt32`] hold
//! them, with the allocations of their gadgets.
//!
//! A [`Word`] keeps three masks instead of 32 enum values, so the common case (every bit
//! allocated) is a handful of integer operations and one run of 32 writes; words with constant
//! bits (the initial hash value, padding, layer numbers) take the per-bit path, which follows
//! the gadgets' case analysis line for line.

use ff::PrimeField;

use super::Sink;

/// A bit: a constant, or an allocated bit, possibly negated. `value` is the bit's value (what
/// `Boolean::get_value` returns); the allocated variable holds `value ^ neg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    Const(bool),
    Var { value: bool, neg: bool },
}

impl Bit {
    /// An allocated, not negated bit.
    pub fn var(value: bool) -> Self {
        Bit::Var { value, neg: false }
    }

    pub fn value(self) -> bool {
        match self {
            Bit::Const(v) | Bit::Var { value: v, .. } => v,
        }
    }

    /// `Boolean::and`.
    pub fn and<F: PrimeField, S: Sink<F>>(s: &mut S, a: Self, b: Self) -> Self {
        match (a, b) {
            (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
            (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
            (a, b) => {
                let v = a.value() & b.value();
                s.bits(u64::from(v), 1);
                Bit::var(v)
            }
        }
    }

    /// `Boolean::xor`.
    pub fn xor<F: PrimeField, S: Sink<F>>(s: &mut S, a: Self, b: Self) -> Self {
        match (a, b) {
            (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
            (Bit::Const(true), x) | (x, Bit::Const(true)) => !x,
            (Bit::Var { value: va, neg: na }, Bit::Var { value: vb, neg: nb }) => {
                s.bits(u64::from(va ^ na ^ vb ^ nb), 1);
                Bit::Var {
                    value: va ^ vb,
                    neg: na ^ nb,
                }
            }
        }
    }

    /// `Boolean::sha256_ch`.
    pub fn ch<F: PrimeField, S: Sink<F>>(s: &mut S, a: Self, b: Self, c: Self) -> Self {
        let value = (a.value() & b.value()) ^ (!a.value() & c.value());
        match (a, b, c) {
            (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
            (Bit::Const(false), _, c) => c,
            (a, Bit::Const(false), c) => Bit::and(s, !a, c),
            (a, b, Bit::Const(false)) => Bit::and(s, a, b),
            (a, b, Bit::Const(true)) => !Bit::and(s, a, !b),
            (a, Bit::Const(true), c) => !Bit::and(s, !a, !c),
            _ => {
                s.bits(u64::from(value), 1);
                Bit::var(value)
            }
        }
    }

    /// `Boolean::sha256_maj`.
    pub fn maj<F: PrimeField, S: Sink<F>>(s: &mut S, a: Self, b: Self, c: Self) -> Self {
        let (va, vb, vc) = (a.value(), b.value(), c.value());
        let value = (va & vb) ^ (va & vc) ^ (vb & vc);
        match (a, b, c) {
            (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
            (Bit::Const(false), b, c) => Bit::and(s, b, c),
            (a, Bit::Const(false), c) => Bit::and(s, a, c),
            (a, b, Bit::Const(false)) => Bit::and(s, a, b),
            (a, b, Bit::Const(true)) => !Bit::and(s, !a, !b),
            (a, Bit::Const(true), c) => !Bit::and(s, !a, !c),
            (Bit::Const(true), b, c) => !Bit::and(s, !b, !c),
            _ => {
                // The majority bit, then `b AND c`.
                s.bits(u64::from(value) | u64::from(vb & vc) << 1, 0b11);
                Bit::var(value)
            }
        }
    }
}

impl std::ops::Not for Bit {
    type Output = Bit;

    fn not(self) -> Bit {
        match self {
            Bit::Const(v) => Bit::Const(!v),
            Bit::Var { value, neg } => Bit::Var {
                value: !value,
                neg: !neg,
            },
        }
    }
}

/// A 32-bit word: per bit (least significant first) its value, whether it is allocated, and
/// whether it is the negation of its variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word {
    pub value: u32,
    /// Set where the bit is allocated; clear where it is a constant.
    pub var: u32,
    /// Set where an allocated bit is negated (always clear where `var` is).
    pub neg: u32,
}

impl Word {
    pub const fn constant(value: u32) -> Self {
        Word {
            value,
            var: 0,
            neg: 0,
        }
    }

    /// 32 allocated bits holding `value`.
    pub const fn allocated(value: u32) -> Self {
        Word {
            value,
            var: u32::MAX,
            neg: 0,
        }
    }

    /// Bits most significant first, as `UInt32::from_bits_be` reads them: `value` and `var`
    /// given as big-endian bytes of a message.
    pub fn from_be_bytes(value: [u8; 4], var: [u8; 4]) -> Self {
        Word {
            value: u32::from_be_bytes(value),
            var: u32::from_be_bytes(var),
            neg: 0,
        }
    }

    pub fn is_constant(&self) -> bool {
        self.var == 0
    }

    fn bit(&self, i: usize) -> Bit {
        let value = self.value >> i & 1 == 1;
        if self.var >> i & 1 == 1 {
            Bit::Var {
                value,
                neg: self.neg >> i & 1 == 1,
            }
        } else {
            Bit::Const(value)
        }
    }

    fn from_bits(bits: [Bit; 32]) -> Self {
        let mut w = Word::constant(0);
        for (i, b) in bits.into_iter().enumerate() {
            match b {
                Bit::Const(v) => w.value |= u32::from(v) << i,
                Bit::Var { value, neg } => {
                    w.value |= u32::from(value) << i;
                    w.var |= 1 << i;
                    w.neg |= u32::from(neg) << i;
                }
            }
        }
        w
    }

    /// The allocated variables' values (meaningful where `var` is set).
    fn vars(&self) -> u32 {
        self.value ^ self.neg
    }

    pub fn rotr(self, by: u32) -> Self {
        Word {
            value: self.value.rotate_right(by),
            var: self.var.rotate_right(by),
            neg: self.neg.rotate_right(by),
        }
    }

    /// `UInt32::xor`: a variable per position where both bits are allocated.
    pub fn xor<F: PrimeField>(s: &mut impl Sink<F>, a: Self, b: Self) -> Self {
        let both = a.var & b.var;
        s.bits(u64::from(a.vars() ^ b.vars()), u64::from(both));
        let (only_a, only_b) = (a.var & !b.var, b.var & !a.var);
        Word {
            value: a.value ^ b.value,
            var: a.var | b.var,
            // A constant one operand negates the other side.
            neg: (both & (a.neg ^ b.neg))
                | (only_a & (a.neg ^ b.value))
                | (only_b & (b.neg ^ a.value)),
        }
    }

    fn per_bit<F: PrimeField, S: Sink<F>>(
        s: &mut S,
        [a, b, c]: [Self; 3],
        op: fn(&mut S, Bit, Bit, Bit) -> Bit,
    ) -> Self {
        Word::from_bits(std::array::from_fn(|i| op(s, a.bit(i), b.bit(i), c.bit(i))))
    }

    /// `UInt32::sha256_ch`.
    pub fn ch<F: PrimeField>(s: &mut impl Sink<F>, a: Self, b: Self, c: Self) -> Self {
        if a.var & b.var & c.var != u32::MAX {
            return Word::per_bit(s, [a, b, c], Bit::ch);
        }
        let value = (a.value & b.value) ^ (!a.value & c.value);
        s.bits(u64::from(value), u64::from(u32::MAX));
        Word::allocated(value)
    }

    /// `UInt32::sha256_maj`.
    pub fn maj<F: PrimeField>(s: &mut impl Sink<F>, a: Self, b: Self, c: Self) -> Self {
        if a.var & b.var & c.var != u32::MAX {
            return Word::per_bit(s, [a, b, c], Bit::maj);
        }
        let value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
        let bc = b.value & c.value;
        // Per position: the majority bit, then `b AND c`.
        let pairs = interleave(value, bc);
        s.bits(pairs, u64::MAX);
        Word::allocated(value)
    }

    /// `UInt32::addmany`: the full-width sum's bits, unless every operand is constant.
    pub fn addmany<F: PrimeField>(s: &mut impl Sink<F>, operands: &[Self]) -> Self {
        let sum: u64 = operands.iter().map(|w| u64::from(w.value)).sum();
        if operands.iter().all(Word::is_constant) {
            return Word::constant(sum as u32);
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = u64::BITS - max.leading_zeros();
        s.bits(sum, u64::MAX >> (64 - width));
        Word::allocated(sum as u32)
    }
}

/// Logical shift right: the bits shifted in are constant zeros.
impl std::ops::Shr<u32> for Word {
    type Output = Word;

    fn shr(self, by: u32) -> Word {
        Word {
            value: self.value >> by,
            var: self.var >> by,
            neg: self.neg >> by,
        }
    }
}

/// `a` in the even bits and `b` in the odd bits.
fn interleave(a: u32, b: u32) -> u64 {
    fn spread(x: u32) -> u64 {
        let mut x = u64::from(x);
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
        x = (x | x << 2) & 0x3333_3333_3333_3333;
        (x | x << 1) & 0x5555_5555_5555_5555
    }
    spread(a) | spread(b) << 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_puts_a_even_and_b_odd() {
        let (a, b) = (0xDEAD_BEEF_u32, 0x1234_5678_u32);
        let x = interleave(a, b);
        for i in 0..32 {
            assert_eq!(x >> (2 * i) & 1, u64::from(a >> i & 1));
            assert_eq!(x >> (2 * i + 1) & 1, u64::from(b >> i & 1));
        }
    }
}
