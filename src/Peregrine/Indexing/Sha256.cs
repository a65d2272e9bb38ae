using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Peregrine.Indexing;

/// <summary>
/// SHA-256 (FIPS 180-4 §6.2) in managed code: what <see cref="ContentHash"/> uses until the
/// process has hashed enough content for OpenSSL's speed to pay for OpenSSL's memory. It runs at
/// about a seventh of OpenSSL's speed on a CPU with the SHA extensions (docs/performance.md,
/// "Content hashes without OpenSSL"); the tests check it against
/// <see cref="System.Security.Cryptography.SHA256"/>.
/// </summary>
internal sealed class Sha256
{
    public const int HashSizeInBytes = 32;
    private const int BlockSize = 64;

    // The first 32 bits of the fractional parts of the cube roots of the first 64 primes (§4.2.2).
    private static ReadOnlySpan<uint> K =>
    [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ];

    private readonly uint[] _state = new uint[8];
    private readonly byte[] _pending = new byte[BlockSize];
    private int _pendingLength;
    private long _length;

    public Sha256() => Reset();

    public static void HashData(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        var hash = new Sha256();
        hash.Append(source);
        hash.Finish(destination);
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        _length += data.Length;
        if (_pendingLength > 0)
        {
            var take = Math.Min(BlockSize - _pendingLength, data.Length);
            data[..take].CopyTo(_pending.AsSpan(_pendingLength));
            _pendingLength += take;
            data = data[take..];
            if (_pendingLength < BlockSize)
            {
                return;
            }

            Compress(_state, _pending);
            _pendingLength = 0;
        }

        var whole = data.Length & ~(BlockSize - 1);
        if (whole > 0)
        {
            Compress(_state, data[..whole]);
            data = data[whole..];
        }

        data.CopyTo(_pending);
        _pendingLength = data.Length;
    }

    /// <summary>Writes the hash of everything appended since the last reset, and resets.</summary>
    public void Finish(Span<byte> destination)
    {
        // Padding (§5.1.1): a 1 bit, zeros, and the length in bits as 64 bits, ending a block.
        Span<byte> tail = stackalloc byte[BlockSize * 2];
        tail.Clear();
        _pending.AsSpan(0, _pendingLength).CopyTo(tail);
        tail[_pendingLength] = 0x80;
        var tailLength = _pendingLength + 9 <= BlockSize ? BlockSize : BlockSize * 2;
        BinaryPrimitives.WriteInt64BigEndian(tail[(tailLength - 8)..], _length * 8);
        Compress(_state, tail[..tailLength]);
        for (var i = 0; i < 8; i++)
        {
            BinaryPrimitives.WriteUInt32BigEndian(destination[(i * 4)..], _state[i]);
        }

        Reset();
    }

    private void Reset()
    {
        // The first 32 bits of the fractional parts of the square roots of the first 8 primes (§5.3.3).
        ReadOnlySpan<uint> initial = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
        initial.CopyTo(_state);
        _pendingLength = 0;
        _length = 0;
    }

    [SkipLocalsInit]
    private static void Compress(uint[] state, ReadOnlySpan<byte> blocks)
    {
        Span<uint> w = stackalloc uint[64];
        var k = K;
        while (blocks.Length >= BlockSize)
        {
            for (var i = 0; i < 16; i++)
            {
                w[i] = BinaryPrimitives.ReadUInt32BigEndian(blocks[(i * 4)..]);
            }

            for (var i = 16; i < 64; i++)
            {
                var w15 = w[i - 15];
                var w2 = w[i - 2];
                var s0 = BitOperations.RotateRight(w15, 7) ^ BitOperations.RotateRight(w15, 18) ^ (w15 >> 3);
                var s1 = BitOperations.RotateRight(w2, 17) ^ BitOperations.RotateRight(w2, 19) ^ (w2 >> 10);
                w[i] = w[i - 16] + s0 + w[i - 7] + s1;
            }

            uint a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6], h = state[7];
            for (var i = 0; i < 64; i++)
            {
                var t1 = h
                    + (BitOperations.RotateRight(e, 6) ^ BitOperations.RotateRight(e, 11) ^ BitOperations.RotateRight(e, 25))
                    + (g ^ (e & (f ^ g)))
                    + k[i] + w[i];
                var t2 = (BitOperations.RotateRight(a, 2) ^ BitOperations.RotateRight(a, 13) ^ BitOperations.RotateRight(a, 22))
                    + ((a & b) | (c & (a | b)));
                h = g;
                g = f;
                f = e;
                e = d + t1;
                d = c;
                c = b;
                b = a;
                a = t1 + t2;
            }

            state[0] += a;
            state[1] += b;
            state[2] += c;
            state[3] += d;
            state[4] += e;
            state[5] += f;
            state[6] += g;
            state[7] += h;
            blocks = blocks[BlockSize..];
        }
    }
}
