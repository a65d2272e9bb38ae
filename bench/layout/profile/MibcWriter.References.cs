using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Security.Cryptography;

namespace Peregrine.Profile;

/// <summary>
/// The references of the .mibc: each profiled method becomes a MemberRef, and each type it names a
/// TypeRef, whose assembly references and signatures are copied from the method's own module, so
/// that ILC resolves them against the assemblies it compiles.
/// </summary>
internal sealed partial class MibcWriter
{
    // ECMA-335 §II.23.1.16 element types that carry more than themselves.
    const int ElementPtr = 0x0f, ElementByRef = 0x10, ElementValueType = 0x11, ElementClass = 0x12;
    const int ElementVar = 0x13, ElementArray = 0x14, ElementGenericInst = 0x15, ElementFnPtr = 0x1b;
    const int ElementSzArray = 0x1d, ElementMVar = 0x1e, ElementCModReqd = 0x1f, ElementCModOpt = 0x20;
    const int ElementSentinel = 0x41, ElementPinned = 0x45;

    // ECMA-335 §II.23.2.1: a method signature with this flag has a generic parameter count.
    const byte SignatureGeneric = 0x10;

    readonly Dictionary<string, AssemblyReferenceHandle> _assemblyRefs = new(StringComparer.OrdinalIgnoreCase);
    readonly Dictionary<(EntityHandle Scope, string Namespace, string Name), TypeReferenceHandle> _typeRefs = [];
    readonly Dictionary<(MetadataReader, int), EntityHandle> _memberRefs = [];

    /// <summary>A MemberRef of the .mibc for a method definition of <paramref name="md"/>.</summary>
    /// <exception cref="NotSupportedException">the signature holds an element type this copier does not know</exception>
    public EntityHandle MethodRef(MetadataReader md, MethodDefinitionHandle method)
    {
        var key = (md, MetadataTokens.GetToken(method));
        if (_memberRefs.TryGetValue(key, out var h)) return h;
        var definition = md.GetMethodDefinition(method);
        var parent = TypeRef(md, definition.GetDeclaringType());
        var reader = md.GetBlobReader(definition.Signature);
        var signature = new BlobBuilder();
        CopyMethodSignature(md, ref reader, signature);
        h = _metadata.AddMemberReference(parent, _metadata.GetOrAddString(md.GetString(definition.Name)), _metadata.GetOrAddBlob(signature));
        return _memberRefs[key] = h;
    }

    /// <summary>A TypeRef (or TypeSpec) of the .mibc for a type handle of <paramref name="md"/>.</summary>
    public EntityHandle TypeRef(MetadataReader md, EntityHandle type)
    {
        switch (type.Kind)
        {
            case HandleKind.TypeDefinition:
            {
                var td = md.GetTypeDefinition((TypeDefinitionHandle)type);
                var parent = td.GetDeclaringType();
                EntityHandle scope = parent.IsNil ? SelfRef(md) : TypeRef(md, parent);
                return AddTypeRef(scope, parent.IsNil ? md.GetString(td.Namespace) : "", md.GetString(td.Name));
            }

            case HandleKind.TypeReference:
            {
                var tr = md.GetTypeReference((TypeReferenceHandle)type);
                EntityHandle scope;
                switch (tr.ResolutionScope.Kind)
                {
                    case HandleKind.AssemblyReference:
                        var ar = md.GetAssemblyReference((AssemblyReferenceHandle)tr.ResolutionScope);
                        scope = AssemblyRef(md.GetString(ar.Name), ar.Version, md.GetBlobBytes(ar.PublicKeyOrToken), md.GetString(ar.Culture));
                        break;
                    case HandleKind.TypeReference:
                        scope = TypeRef(md, tr.ResolutionScope);
                        break;
                    default:
                        scope = SelfRef(md);
                        break;
                }

                return AddTypeRef(scope, md.GetString(tr.Namespace), md.GetString(tr.Name));
            }

            case HandleKind.TypeSpecification:
            {
                var ts = md.GetTypeSpecification((TypeSpecificationHandle)type);
                var reader = md.GetBlobReader(ts.Signature);
                var signature = new BlobBuilder();
                CopyType(md, ref reader, signature);
                return _metadata.AddTypeSpecification(_metadata.GetOrAddBlob(signature));
            }

            default:
                throw new NotSupportedException($"a type handle of kind {type.Kind}");
        }
    }

    /// <summary>The method's name as dump prints it: <c>Namespace.Type+Nested.Method</c>.</summary>
    public static string Describe(MetadataReader md, MethodDefinitionHandle method)
    {
        var definition = md.GetMethodDefinition(method);
        return TypeName(md, definition.GetDeclaringType()) + "." + md.GetString(definition.Name);
    }

    static string TypeName(MetadataReader md, TypeDefinitionHandle type)
    {
        var td = md.GetTypeDefinition(type);
        var parent = td.GetDeclaringType();
        if (!parent.IsNil) return TypeName(md, parent) + "+" + md.GetString(td.Name);
        var ns = md.GetString(td.Namespace);
        return ns.Length == 0 ? md.GetString(td.Name) : ns + "." + md.GetString(td.Name);
    }

    AssemblyReferenceHandle AssemblyRef(string name, Version version, byte[] publicKeyOrToken, string culture)
    {
        if (_assemblyRefs.TryGetValue(name, out var h)) return h;
        byte[] token = publicKeyOrToken;
        if (token.Length > 8)
        {
            // An AssemblyDef holds the full public key, a reference its token: the last 8 bytes of
            // the key's SHA-1, reversed (ECMA-335 §II.6.3). SHA-1 is the format's, not a choice.
            var hash = SHA1.HashData(token);
            token = hash.AsSpan(hash.Length - 8).ToArray();
            Array.Reverse(token);
        }

        h = _metadata.AddAssemblyReference(_metadata.GetOrAddString(name), version,
            string.IsNullOrEmpty(culture) ? default : _metadata.GetOrAddString(culture),
            token.Length == 0 ? default : _metadata.GetOrAddBlob(token), default, default);
        return _assemblyRefs[name] = h;
    }

    AssemblyReferenceHandle SelfRef(MetadataReader md)
    {
        var a = md.GetAssemblyDefinition();
        return AssemblyRef(md.GetString(a.Name), a.Version, md.GetBlobBytes(a.PublicKey), md.GetString(a.Culture));
    }

    TypeReferenceHandle AddTypeRef(EntityHandle scope, string ns, string name)
    {
        var key = (scope, ns, name);
        if (_typeRefs.TryGetValue(key, out var h)) return h;
        return _typeRefs[key] = _metadata.AddTypeReference(scope, ns.Length == 0 ? default : _metadata.GetOrAddString(ns), _metadata.GetOrAddString(name));
    }

    // Signatures are copied element by element (ECMA-335 §II.23.2), as each type token in them
    // must be rewritten into a reference of the .mibc.

    void CopyTypeHandle(MetadataReader md, ref BlobReader r, BlobBuilder w) =>
        w.WriteCompressedInteger(CodedIndex.TypeDefOrRefOrSpec(TypeRef(md, r.ReadTypeHandle())));

    void CopyType(MetadataReader md, ref BlobReader r, BlobBuilder w)
    {
        while (true)
        {
            int et = r.ReadCompressedInteger();
            w.WriteCompressedInteger(et);
            switch (et)
            {
                case ElementCModReqd or ElementCModOpt:
                    CopyTypeHandle(md, ref r, w);
                    continue;
                case ElementSentinel or ElementPinned or ElementPtr or ElementByRef or ElementSzArray:
                    continue;
                case ElementValueType or ElementClass:
                    CopyTypeHandle(md, ref r, w);
                    return;
                case ElementVar or ElementMVar:
                    w.WriteCompressedInteger(r.ReadCompressedInteger());
                    return;
                case ElementArray:
                {
                    CopyType(md, ref r, w);
                    w.WriteCompressedInteger(r.ReadCompressedInteger()); // rank
                    int n = r.ReadCompressedInteger();
                    w.WriteCompressedInteger(n);
                    for (int i = 0; i < n; i++) w.WriteCompressedInteger(r.ReadCompressedInteger()); // sizes
                    n = r.ReadCompressedInteger();
                    w.WriteCompressedInteger(n);
                    for (int i = 0; i < n; i++) w.WriteCompressedSignedInteger(r.ReadCompressedSignedInteger()); // lower bounds
                    return;
                }

                case ElementGenericInst:
                {
                    w.WriteCompressedInteger(r.ReadCompressedInteger()); // class or valuetype
                    CopyTypeHandle(md, ref r, w);
                    int n = r.ReadCompressedInteger();
                    w.WriteCompressedInteger(n);
                    for (int i = 0; i < n; i++) CopyType(md, ref r, w);
                    return;
                }

                case ElementFnPtr:
                    CopyMethodSignature(md, ref r, w);
                    return;
                default:
                    // The primitives (void .. string), typedbyref, i, u and object stand alone.
                    if (et is (>= 0x01 and <= 0x0e) or 0x16 or 0x18 or 0x19 or 0x1c) return;
                    throw new NotSupportedException($"element type 0x{et:x} in a signature");
            }
        }
    }

    void CopyMethodSignature(MetadataReader md, ref BlobReader r, BlobBuilder w)
    {
        byte header = r.ReadByte();
        w.WriteByte(header);
        if ((header & SignatureGeneric) != 0) w.WriteCompressedInteger(r.ReadCompressedInteger());
        int n = r.ReadCompressedInteger();
        w.WriteCompressedInteger(n);
        for (int i = 0; i <= n; i++) CopyType(md, ref r, w); // the return type, then the parameters
    }
}
