namespace Peregrine.Server.Connections;

internal sealed unsafe partial class CleartextReactor
{
    /// <summary>
    /// A loop's connections by descriptor, as nginx keeps its own: an array indexed by the
    /// descriptor. Descriptors are small integers, the lowest free one given first (POSIX), so
    /// the array stays about as long as the most descriptors the process has held at once; a
    /// lookup for each epoll event is a load, where the dictionary it replaces hashed and probed
    /// (docs/performance.md, "The request path in Native AOT").
    /// </summary>
    private sealed class ConnectionTable
    {
        private Connection?[] _byDescriptor = new Connection?[64];

        public int Count { get; private set; }

        public Connection? this[int fd] => (uint)fd < (uint)_byDescriptor.Length ? _byDescriptor[fd] : null;

        public void Add(Connection connection)
        {
            var fd = connection.Fd;
            if (fd >= _byDescriptor.Length)
            {
                Array.Resize(ref _byDescriptor, Math.Max(fd + 1, _byDescriptor.Length * 2));
            }

            _byDescriptor[fd] = connection;
            Count++;
        }

        public void Remove(Connection connection)
        {
            var fd = connection.Fd;
            if ((uint)fd < (uint)_byDescriptor.Length && ReferenceEquals(_byDescriptor[fd], connection))
            {
                _byDescriptor[fd] = null;
                Count--;
            }
        }

        /// <summary>The connections held now, copied: the caller may close them as it goes.</summary>
        public List<Connection> ToList()
        {
            var all = new List<Connection>(Count);
            foreach (var connection in _byDescriptor)
            {
                if (connection is not null)
                {
                    all.Add(connection);
                }
            }

            return all;
        }

        /// <summary>The connections held now, in descriptor order, without a copy.</summary>
        public ReadOnlySpan<Connection?> All => _byDescriptor;
    }
}
