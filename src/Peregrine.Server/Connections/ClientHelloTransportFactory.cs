using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Peregrine.Http1;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Connections;

/// <summary>
/// Kestrel's socket transport for a TLS server, with each connection's scheduling chosen from
/// the protocols its ClientHello offers. A connection whose client offers <c>h2</c> gets Kestrel's
/// default scheduling (the output of many streams gathers in the socket's pipe and leaves in
/// one send from an I/O queue); any other gets inline scheduling (read, decrypt, answer, encrypt
/// and send on the socket's thread, as a cleartext Peregrine server does). Neither setting serves
/// both protocols (docs/performance.md, "Inline I/O":
/// inline scheduling doubles HTTPS/1.1 and halves HTTP/2), and Kestrel fixes the scheduling when
/// a connection is accepted, before its handshake says which protocol it speaks. So the listener
/// peeks at the first bytes (the ClientHello, left in the socket for Kestrel's handshake) before
/// it hands the connection to Kestrel. On a cleartext server the same holds for prior-knowledge
/// h2c, which the listener tells by HTTP/2's connection preface (<see cref="ClientHelloListener.ReadPreface"/>).
/// </summary>
/// <remarks>
/// The connections themselves are Kestrel's (<see cref="SocketConnectionContextFactory"/>), with
/// the socket transport's default options and a pool of 32 KiB blocks
/// (<see cref="LargeBlockMemoryPool"/>), except those whose ClientHello offers only HTTP/1.1
/// when a <paramref name="terminator"/> is given: the listener ends their TLS itself and hands
/// Kestrel a connection already decrypted (<see cref="TerminatedConnection"/>). Endpoints other
/// than IP addresses go to Kestrel's own transport. On the HTTPS port (<paramref name="httpsPort"/>), a connection that starts with
/// plain HTTP is answered with 400 (see <see cref="ClientHelloListener"/>); on any other, such as
/// <c>--redirect-http</c>'s cleartext port, it is handed on as ever.
/// </remarks>
/// <param name="loggers">For Kestrel's transport category.</param>
/// <param name="httpsPort">The port as configured (0 for one picked at bind) whose listener answers plain HTTP with 400; null for none.</param>
/// <param name="cleartextPools">
/// For a cleartext server: its connections are sorted by HTTP/2's connection preface
/// (prior-knowledge h2c gets Kestrel's default scheduling, anything else inline) rather than by a
/// ClientHello; HTTP/1.1 connections take their memory from this pool (Kestrel's own), h2c ones
/// from a pool of 32 KiB blocks, as HTTP/2 over TLS does.
/// </param>
/// <param name="fastPath">
/// For a cleartext server on Linux with the fast path: its connections are read and answered by a
/// <see cref="CleartextReactor"/> first, and reach Kestrel only when the fast path hands them on.
/// </param>
/// <param name="terminator">
/// For a TLS server: ends TLS here, below Kestrel, for connections whose ClientHello offers only
/// HTTP/1.1 (see <see cref="TlsTerminator"/>); null leaves every handshake to Kestrel.
/// </param>
internal sealed class ClientHelloTransportFactory(ILoggerFactory loggers, int? httpsPort = null, IMemoryPoolFactory<byte>? cleartextPools = null, FastPathSlot? fastPath = null, TlsTerminator? terminator = null) : IConnectionListenerFactory, IConnectionListenerFactorySelector
{
    /// <summary>
    /// Whether this runtime's socket transport lets its connections be given a memory pool
    /// (see <see cref="Options"/>); without it the server keeps Kestrel's transport as is.
    /// </summary>
    public static bool IsSupported { get; } = Probe();

    public bool CanBind(EndPoint endpoint) => endpoint is IPEndPoint;

    /// <summary>
    /// The socket transport's defaults, with <paramref name="pools"/>' memory pool: the public
    /// constructor of <see cref="SocketConnectionFactoryOptions"/> leaves the pool at
    /// <see cref="System.Buffers.MemoryPool{T}.Shared"/>, which allocates per rent and hands
    /// out empty buffers for a size hint of 0, which Kestrel's HTTP/1.1 output does not expect
    /// (a body written before the response started failed with "Specified argument was out of
    /// the range of valid values"). The pool is set the way Kestrel's own transport sets it.
    /// </summary>
    internal static SocketConnectionFactoryOptions Options(bool inline, IMemoryPoolFactory<byte> pools)
    {
        var options = new SocketConnectionFactoryOptions { UnsafePreferInlineScheduling = inline };
        SetMemoryPoolFactory(options, pools);
        return options;
    }

    [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "set_MemoryPoolFactory")]
    private static extern void SetMemoryPoolFactory(SocketConnectionFactoryOptions options, IMemoryPoolFactory<byte> value);

    private static bool Probe()
    {
        try
        {
            SetMemoryPoolFactory(new SocketConnectionFactoryOptions(), null!);
            return true;
        }
        catch (MissingMethodException)
        {
            return false;
        }
    }

    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        // Bound as Kestrel's socket transport binds (dual mode for [::], the default backlog),
        // with its exception for a port in use, which Kestrel reports naming the address.
        Socket socket;
        try
        {
            socket = SocketTransportOptions.CreateDefaultBoundListenSocket(endpoint);
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            throw new AddressInUseException(ex.Message, ex);
        }

        try
        {
            socket.Listen(new SocketTransportOptions().Backlog);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        var logger = loggers.CreateLogger("Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets");
        var answersPlainHttp = ((IPEndPoint)endpoint).Port == httpsPort;
        var listener = cleartextPools is null
            ? new ClientHelloListener(socket, logger, new LargeBlockMemoryPool.Factory(), ClientHelloListener.DefaultPeekTimeout, answersPlainHttp, terminator: terminator)
            : new ClientHelloListener(socket, logger, cleartextPools, ClientHelloListener.DefaultPeekTimeout, answersPlainHttp: false, cleartext: true, fastPath?.Get());
        return new ValueTask<IConnectionListener>(listener);
    }
}
