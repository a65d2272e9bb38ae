using System.Collections.Immutable;
using System.Reflection.Emit;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace Peregrine.Tests.Architecture;

/// <summary>
/// Which namespace of one compiled assembly uses which, read from its metadata: base types,
/// interfaces, generic constraints, field, method, property and local signatures, custom
/// attributes, and every token in every method body (calls, <c>newobj</c>, field loads and
/// stores, <c>ldtoken</c>, casts, <c>box</c>, <c>newarr</c> …). A nested type, compiler-made
/// ones included (closures, state machines, the logging generator's structs), counts for the
/// namespace of the type it is declared in, so a lambda's reference is its method's reference.
/// Only the assembly's own types are nodes: a reference to another assembly is no edge here.
/// </summary>
internal sealed class NamespaceGraph
{
    private readonly Dictionary<string, Dictionary<string, string>> _edges = new(StringComparer.Ordinal);

    /// <summary>Each namespace that uses another, with one example of the use ("A.B.M uses C.D").</summary>
    public IReadOnlyDictionary<string, Dictionary<string, string>> Edges => _edges;

    public void Add(string from, string to, string example)
    {
        if (from.Length == 0 || to.Length == 0 || from == to)
        {
            return;
        }

        if (!_edges.TryGetValue(from, out var targets))
        {
            _edges[from] = targets = new Dictionary<string, string>(StringComparer.Ordinal);
        }

        targets.TryAdd(to, example);
        if (!_edges.ContainsKey(to))
        {
            _edges[to] = new Dictionary<string, string>(StringComparer.Ordinal);
        }
    }

    /// <summary>
    /// Every dependency cycle, one per strongly connected set of namespaces (Tarjan), each
    /// written as a closed path through the set: <c>A → B → A</c>.
    /// </summary>
    public List<IReadOnlyList<string>> Cycles()
    {
        var index = new Dictionary<string, int>(StringComparer.Ordinal);
        var low = new Dictionary<string, int>(StringComparer.Ordinal);
        var onStack = new HashSet<string>(StringComparer.Ordinal);
        var stack = new Stack<string>();
        var components = new List<List<string>>();
        var counter = 0;

        void Connect(string node)
        {
            index[node] = low[node] = counter++;
            stack.Push(node);
            onStack.Add(node);
            foreach (var next in _edges[node].Keys.Order(StringComparer.Ordinal))
            {
                if (!index.ContainsKey(next))
                {
                    Connect(next);
                    low[node] = Math.Min(low[node], low[next]);
                }
                else if (onStack.Contains(next))
                {
                    low[node] = Math.Min(low[node], index[next]);
                }
            }

            if (low[node] == index[node])
            {
                var component = new List<string>();
                string member;
                do
                {
                    member = stack.Pop();
                    onStack.Remove(member);
                    component.Add(member);
                }
                while (member != node);

                if (component.Count > 1)
                {
                    components.Add(component);
                }
            }
        }

        foreach (var node in _edges.Keys.Order(StringComparer.Ordinal))
        {
            if (!index.ContainsKey(node))
            {
                Connect(node);
            }
        }

        return components.Select(ShortestCycle).ToList();
    }

    /// <summary>
    /// Takes out the namespaces that are not <paramref name="own"/> (a source generator's, such
    /// as the configuration binder's), joining each use of one to what it uses, so that
    /// <c>A → generated → B</c> reads as the <c>A → B</c> it is.
    /// </summary>
    public void KeepOnly(Func<string, bool> own)
    {
        foreach (var foreign in _edges.Keys.Where(ns => !own(ns)).ToList())
        {
            var onward = _edges[foreign];
            _edges.Remove(foreign);
            foreach (var (from, targets) in _edges)
            {
                if (targets.Remove(foreign, out var example))
                {
                    foreach (var (to, next) in onward)
                    {
                        if (to != from)
                        {
                            targets.TryAdd(to, example + ", which " + next);
                        }
                    }
                }
            }
        }
    }

    // The shortest closed path from the set's first namespace (in name order) back to itself,
    // found breadth first inside the set.
    private IReadOnlyList<string> ShortestCycle(List<string> component)
    {
        var members = component.ToHashSet(StringComparer.Ordinal);
        var start = component.Order(StringComparer.Ordinal).First();
        var previous = new Dictionary<string, string>(StringComparer.Ordinal);
        var queue = new Queue<string>();
        queue.Enqueue(start);
        while (queue.Count > 0)
        {
            var node = queue.Dequeue();
            foreach (var next in _edges[node].Keys.Order(StringComparer.Ordinal))
            {
                if (!members.Contains(next))
                {
                    continue;
                }

                if (next == start)
                {
                    var path = new List<string> { start };
                    for (var at = node; at != start; at = previous[at])
                    {
                        path.Add(at);
                    }

                    path.Add(start);
                    path.Reverse();
                    return path;
                }

                if (previous.TryAdd(next, node))
                {
                    queue.Enqueue(next);
                }
            }
        }

        throw new InvalidOperationException("a strongly connected set without a cycle: " + string.Join(", ", component));
    }

    /// <summary>A cycle as a reader wants it: the path, then the use that makes each hop.</summary>
    public string Describe(IReadOnlyList<string> cycle)
    {
        var lines = new List<string> { string.Join(" → ", cycle) };
        var members = CycleSet(cycle[0]).Order(StringComparer.Ordinal).ToList();
        if (members.Count > cycle.Count - 1)
        {
            lines.Add($"  (one of the cycles among {string.Join(", ", members)})");
        }

        for (var i = 0; i + 1 < cycle.Count; i++)
        {
            lines.Add($"    {cycle[i]} → {cycle[i + 1]}: {_edges[cycle[i]][cycle[i + 1]]}");
        }

        return string.Join(Environment.NewLine, lines);
    }

    /// <summary>The namespaces that <paramref name="member"/> reaches and that reach it back: its whole cycle set.</summary>
    public HashSet<string> CycleSet(string member) =>
        Reachable(member).Where(ns => Reachable(ns).Contains(member)).ToHashSet(StringComparer.Ordinal);

    private HashSet<string> Reachable(string start)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal) { start };
        var queue = new Queue<string>([start]);
        while (queue.Count > 0)
        {
            foreach (var next in _edges[queue.Dequeue()].Keys)
            {
                if (seen.Add(next))
                {
                    queue.Enqueue(next);
                }
            }
        }

        return seen;
    }

    /// <summary>Reads the graph of the assembly at <paramref name="path"/>.</summary>
    public static NamespaceGraph Read(string path)
    {
        using var stream = File.OpenRead(path);
        using var pe = new PEReader(stream);
        var reader = pe.GetMetadataReader();
        var graph = new NamespaceGraph();
        new AssemblyWalk(reader, pe, graph).Run();
        var assembly = reader.GetString(reader.GetAssemblyDefinition().Name);
        graph.KeepOnly(ns => ns == assembly || ns.StartsWith(assembly + ".", StringComparison.Ordinal));
        return graph;
    }

    private sealed class AssemblyWalk(MetadataReader reader, PEReader pe, NamespaceGraph graph)
    {
        private readonly Dictionary<TypeDefinitionHandle, (string Namespace, string Name)> _owners = [];
        private readonly SignatureCollector _signatures = new(reader);

        public void Run()
        {
            foreach (var handle in reader.TypeDefinitions)
            {
                var (from, typeName) = Owner(handle);
                if (from.Length == 0)
                {
                    continue; // <Module>, <PrivateImplementationDetails>, anonymous types
                }

                var type = reader.GetTypeDefinition(handle);
                var site = typeName;
                Use(from, site, type.BaseType);
                foreach (var implementation in type.GetInterfaceImplementations())
                {
                    Use(from, site, reader.GetInterfaceImplementation(implementation).Interface);
                }

                Generics(from, site, type.GetGenericParameters());
                Attributes(from, site, type.GetCustomAttributes());

                foreach (var fieldHandle in type.GetFields())
                {
                    var field = reader.GetFieldDefinition(fieldHandle);
                    var fieldSite = site + "." + reader.GetString(field.Name);
                    Note(from, fieldSite, _signatures.Field(field.Signature));
                    Attributes(from, fieldSite, field.GetCustomAttributes());
                }

                foreach (var propertyHandle in type.GetProperties())
                {
                    var property = reader.GetPropertyDefinition(propertyHandle);
                    var propertySite = site + "." + reader.GetString(property.Name);
                    Note(from, propertySite, _signatures.Method(property.Signature));
                    Attributes(from, propertySite, property.GetCustomAttributes());
                }

                foreach (var methodHandle in type.GetMethods())
                {
                    Method(from, site, methodHandle);
                }
            }
        }

        private void Method(string from, string site, MethodDefinitionHandle handle)
        {
            var method = reader.GetMethodDefinition(handle);
            var methodSite = site + "." + reader.GetString(method.Name);
            Note(from, methodSite, _signatures.Method(method.Signature));
            Generics(from, methodSite, method.GetGenericParameters());
            Attributes(from, methodSite, method.GetCustomAttributes());
            foreach (var parameter in method.GetParameters())
            {
                Attributes(from, methodSite, reader.GetParameter(parameter).GetCustomAttributes());
            }

            if (method.RelativeVirtualAddress == 0)
            {
                return; // abstract, extern (a P/Invoke) or runtime-provided
            }

            var body = pe.GetMethodBody(method.RelativeVirtualAddress);
            if (!body.LocalSignature.IsNil)
            {
                var locals = reader.GetStandaloneSignature(body.LocalSignature);
                Note(from, methodSite, _signatures.Locals(locals.Signature));
            }

            foreach (var region in body.ExceptionRegions)
            {
                Use(from, methodSite, region.CatchType);
            }

            var il = body.GetILReader();
            while (il.RemainingBytes > 0)
            {
                var opCode = Instructions.Read(ref il);
                switch (opCode.OperandType)
                {
                    case OperandType.InlineField:
                    case OperandType.InlineMethod:
                    case OperandType.InlineTok:
                    case OperandType.InlineType:
                        Use(from, methodSite, MetadataTokens.EntityHandle(il.ReadInt32()));
                        break;
                    case OperandType.InlineSig:
                        var signature = reader.GetStandaloneSignature((StandaloneSignatureHandle)MetadataTokens.EntityHandle(il.ReadInt32()));
                        Note(from, methodSite, _signatures.Method(signature.Signature));
                        break;
                    case OperandType.InlineSwitch:
                        var targets = il.ReadInt32(); // read before Offset, which += would read first
                        il.Offset += 4 * targets;
                        break;
                    default:
                        il.Offset += Instructions.OperandSize(opCode.OperandType);
                        break;
                }
            }
        }

        private void Generics(string from, string site, GenericParameterHandleCollection parameters)
        {
            foreach (var parameterHandle in parameters)
            {
                var parameter = reader.GetGenericParameter(parameterHandle);
                foreach (var constraint in parameter.GetConstraints())
                {
                    Use(from, site, reader.GetGenericParameterConstraint(constraint).Type);
                }
            }
        }

        // An attribute is a use of its type (the constructor's declaring type); typeof()
        // arguments inside the attribute blob are not read.
        private void Attributes(string from, string site, CustomAttributeHandleCollection attributes)
        {
            foreach (var attributeHandle in attributes)
            {
                Use(from, site, reader.GetCustomAttribute(attributeHandle).Constructor);
            }
        }

        /// <summary>Adds an edge from <paramref name="from"/> to every own type that <paramref name="handle"/> names.</summary>
        private void Use(string from, string site, EntityHandle handle)
        {
            if (handle.IsNil)
            {
                return;
            }

            switch (handle.Kind)
            {
                case HandleKind.TypeDefinition:
                    var (ns, name) = Owner((TypeDefinitionHandle)handle);
                    graph.Add(from, ns, $"{from}.{site} uses {ns}.{name}");
                    break;
                case HandleKind.TypeSpecification:
                    Note(from, site, _signatures.TypeSpec(reader.GetTypeSpecification((TypeSpecificationHandle)handle).Signature));
                    break;
                case HandleKind.MethodDefinition:
                    Use(from, site, reader.GetMethodDefinition((MethodDefinitionHandle)handle).GetDeclaringType());
                    break;
                case HandleKind.FieldDefinition:
                    Use(from, site, reader.GetFieldDefinition((FieldDefinitionHandle)handle).GetDeclaringType());
                    break;
                case HandleKind.MemberReference:
                    var member = reader.GetMemberReference((MemberReferenceHandle)handle);
                    Use(from, site, member.Parent);
                    Note(from, site, member.GetKind() == MemberReferenceKind.Field
                        ? _signatures.Field(member.Signature)
                        : _signatures.Method(member.Signature));
                    break;
                case HandleKind.MethodSpecification:
                    var specification = reader.GetMethodSpecification((MethodSpecificationHandle)handle);
                    Use(from, site, specification.Method);
                    Note(from, site, _signatures.MethodInstantiation(specification.Signature));
                    break;
                default:
                    break; // TypeReference (another assembly), ModuleReference, UserString …
            }
        }

        private void Note(string from, string site, IEnumerable<TypeDefinitionHandle> types)
        {
            foreach (var type in types)
            {
                var (ns, name) = Owner(type);
                graph.Add(from, ns, $"{from}.{site} uses {ns}.{name}");
            }
        }

        // The namespace a type counts for (its outermost declaring type's) and its name within it.
        private (string Namespace, string Name) Owner(TypeDefinitionHandle handle)
        {
            if (_owners.TryGetValue(handle, out var owner))
            {
                return owner;
            }

            var type = reader.GetTypeDefinition(handle);
            var name = reader.GetString(type.Name);
            var declaring = type.GetDeclaringType();
            if (declaring.IsNil)
            {
                owner = (reader.GetString(type.Namespace), name);
            }
            else
            {
                var outer = Owner(declaring);
                owner = (outer.Namespace, outer.Name + "+" + name);
            }

            _owners[handle] = owner;
            return owner;
        }
    }

    /// <summary>Decodes signatures and lists the assembly's own types they name, generic arguments included.</summary>
    private sealed class SignatureCollector(MetadataReader reader) : ISignatureTypeProvider<ImmutableArray<TypeDefinitionHandle>, object?>
    {
        private static readonly ImmutableArray<TypeDefinitionHandle> None = [];

        public ImmutableArray<TypeDefinitionHandle> Field(BlobHandle signature)
        {
            var blob = reader.GetBlobReader(signature);
            return new SignatureDecoder<ImmutableArray<TypeDefinitionHandle>, object?>(this, reader, null).DecodeFieldSignature(ref blob);
        }

        // A method's signature (definition, reference or standalone) or a property's.
        public ImmutableArray<TypeDefinitionHandle> Method(BlobHandle signature)
        {
            var blob = reader.GetBlobReader(signature);
            var method = new SignatureDecoder<ImmutableArray<TypeDefinitionHandle>, object?>(this, reader, null).DecodeMethodSignature(ref blob);
            return Join(method.ParameterTypes.Add(method.ReturnType));
        }

        public ImmutableArray<TypeDefinitionHandle> Locals(BlobHandle signature)
        {
            var blob = reader.GetBlobReader(signature);
            return Join(new SignatureDecoder<ImmutableArray<TypeDefinitionHandle>, object?>(this, reader, null).DecodeLocalSignature(ref blob));
        }

        public ImmutableArray<TypeDefinitionHandle> TypeSpec(BlobHandle signature)
        {
            var blob = reader.GetBlobReader(signature);
            return new SignatureDecoder<ImmutableArray<TypeDefinitionHandle>, object?>(this, reader, null).DecodeType(ref blob);
        }

        public ImmutableArray<TypeDefinitionHandle> MethodInstantiation(BlobHandle signature)
        {
            var blob = reader.GetBlobReader(signature);
            return Join(new SignatureDecoder<ImmutableArray<TypeDefinitionHandle>, object?>(this, reader, null).DecodeMethodSpecificationSignature(ref blob));
        }

        private static ImmutableArray<TypeDefinitionHandle> Join(IEnumerable<ImmutableArray<TypeDefinitionHandle>> parts) =>
            parts.SelectMany(part => part).ToImmutableArray();

        public ImmutableArray<TypeDefinitionHandle> GetTypeFromDefinition(MetadataReader metadata, TypeDefinitionHandle handle, byte rawTypeKind) => [handle];
        public ImmutableArray<TypeDefinitionHandle> GetTypeFromReference(MetadataReader metadata, TypeReferenceHandle handle, byte rawTypeKind) => None;
        public ImmutableArray<TypeDefinitionHandle> GetTypeFromSpecification(MetadataReader metadata, object? context, TypeSpecificationHandle handle, byte rawTypeKind) =>
            TypeSpec(metadata.GetTypeSpecification(handle).Signature);
        public ImmutableArray<TypeDefinitionHandle> GetPrimitiveType(PrimitiveTypeCode typeCode) => None;
        public ImmutableArray<TypeDefinitionHandle> GetSZArrayType(ImmutableArray<TypeDefinitionHandle> elementType) => elementType;
        public ImmutableArray<TypeDefinitionHandle> GetArrayType(ImmutableArray<TypeDefinitionHandle> elementType, ArrayShape shape) => elementType;
        public ImmutableArray<TypeDefinitionHandle> GetByReferenceType(ImmutableArray<TypeDefinitionHandle> elementType) => elementType;
        public ImmutableArray<TypeDefinitionHandle> GetPointerType(ImmutableArray<TypeDefinitionHandle> elementType) => elementType;
        public ImmutableArray<TypeDefinitionHandle> GetPinnedType(ImmutableArray<TypeDefinitionHandle> elementType) => elementType;
        public ImmutableArray<TypeDefinitionHandle> GetGenericInstantiation(ImmutableArray<TypeDefinitionHandle> genericType, ImmutableArray<ImmutableArray<TypeDefinitionHandle>> typeArguments) =>
            genericType.AddRange(typeArguments.SelectMany(argument => argument));
        public ImmutableArray<TypeDefinitionHandle> GetGenericMethodParameter(object? genericContext, int index) => None;
        public ImmutableArray<TypeDefinitionHandle> GetGenericTypeParameter(object? genericContext, int index) => None;
        public ImmutableArray<TypeDefinitionHandle> GetFunctionPointerType(MethodSignature<ImmutableArray<TypeDefinitionHandle>> signature) =>
            Join(signature.ParameterTypes.Add(signature.ReturnType));
        public ImmutableArray<TypeDefinitionHandle> GetModifiedType(ImmutableArray<TypeDefinitionHandle> modifier, ImmutableArray<TypeDefinitionHandle> unmodifiedType, bool isRequired) =>
            unmodifiedType.AddRange(modifier);
    }

    /// <summary>The IL instruction set, as <see cref="OpCodes"/> lists it, indexed by encoding.</summary>
    private static class Instructions
    {
        private static readonly OpCode[] OneByte = new OpCode[0x100];
        private static readonly OpCode[] TwoByte = new OpCode[0x100];

        static Instructions()
        {
            foreach (var field in typeof(OpCodes).GetFields(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Static))
            {
                var opCode = (OpCode)field.GetValue(null)!;
                var value = (ushort)opCode.Value;
                if (opCode.Size == 1)
                {
                    OneByte[value] = opCode;
                }
                else
                {
                    TwoByte[value & 0xFF] = opCode;
                }
            }
        }

        public static OpCode Read(ref BlobReader il)
        {
            var first = il.ReadByte();
            return first == 0xFE ? TwoByte[il.ReadByte()] : OneByte[first];
        }

        public static int OperandSize(OperandType operand) => operand switch
        {
            OperandType.InlineNone => 0,
            OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar => 1,
            OperandType.InlineVar => 2,
            OperandType.InlineI8 or OperandType.InlineR => 8,
            _ => 4, // InlineBrTarget, InlineI, InlineString, ShortInlineR
        };
    }
}
