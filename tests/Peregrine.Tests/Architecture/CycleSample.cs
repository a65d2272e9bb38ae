// A cycle on purpose, for NamespaceCycleTests to find: the detector's proof that it can fail.
// Each namespace below uses another only in the way its name says, so a reader that misses
// that kind of use misses that edge.

namespace Peregrine.Tests.Architecture.CycleSample.Left
{
    internal sealed class LeftHolder
    {
        public static readonly LeftHolder Shared = new();

        // Left → Right, through a field's type.
        public Right.RightWorker? Worker { get; set; }
    }
}

namespace Peregrine.Tests.Architecture.CycleSample.Right
{
    internal sealed class RightWorker
    {
        // Right → Left, only inside a lambda's body (a closure class nested in RightWorker).
        public Func<object> Make(int seed) => () => seed > 0 ? new object() : new Left.LeftHolder();
    }
}

namespace Peregrine.Tests.Architecture.CycleSample.Generic
{
    internal static class GenericUser
    {
        public static int Count()
        {
            var list = new List<Left.LeftHolder?>();
            list.Add(null);
            return list.Count;
        }
    }
}

namespace Peregrine.Tests.Architecture.CycleSample.Cast
{
    internal static class CastUser
    {
        public static bool Is(object value) => value is Left.LeftHolder;
    }
}

namespace Peregrine.Tests.Architecture.CycleSample.Static
{
    internal static class StaticUser
    {
        public static object Read() => Left.LeftHolder.Shared;
    }
}
