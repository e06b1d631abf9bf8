/*
 * JavaOracle: a compiler-grade oracle of call edges for Java, built on javac's Compiler Tree API.
 *
 * It parses and attributes every .java file under REPO_DIR in one javac task (hidden dirs and
 * build/, target/ skipped). module-info.java files are left out and no -sourcepath is given (every
 * file is named on the command line), so that the sources compile as one unnamed module: a
 * module-info on the source path would put javac in module mode, where missing modules break more.
 * Missing dependencies are tolerated: javac's errors are counted, not printed, attribution goes on
 * past them, and what does not resolve to a declaration in the sources is simply not emitted.
 *
 * Usage: java benches/oracles/JavaOracle.java REPO_DIR [CLASSPATH] > out.json   (JDK >= 17)
 *   CLASSPATH (optional, ':'-separated jars) lets library calls resolve, e.g. test frameworks.
 *
 * Output (one JSON object; line and columns 0-based, columns in UTF-16 code units, end_col exclusive):
 *   {"encoding": "utf16", "documents": [{"path": "rel/Path.java", "occurrences": [
 *     {"symbol": "rel/Path.java:L:C:name", "line": L, "col": C, "end_col": E, "def": bool, "callable": bool}]}]}
 * A symbol is the position of the declaration's name. Definitions: the names of classes,
 * interfaces, enums, records, annotation types, methods and constructors. References, all
 * callable: method invocations at the method's name (`a.b.foo(x)`: `foo`), and `new C(..)` at the
 * class name: to the constructor when it is declared in the sources, and to the class (callable
 * only when no source constructor was emitted there, so each site has one callable reference).
 * this(..) and super(..) calls are skipped.
 */
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.IOException;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class JavaOracle {
    static Path root;
    static Trees trees;
    static SourcePositions sp;
    static final Map<String, List<String>> docs = new TreeMap<>(); // path -> occurrence JSON
    static final Map<Tree, String> symbols = new IdentityHashMap<>(); // declaration -> symbol
    static final Map<CompilationUnitTree, CharSequence> texts = new IdentityHashMap<>();
    static int calls, toSource, unresolved;

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: java JavaOracle.java REPO_DIR [CLASSPATH] > out.json");
            System.exit(2);
        }
        root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<Path> files;
        try (Stream<Path> w = Files.walk(root)) {
            files = w.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java"))
                    .filter(p -> root.relativize(p).getNameCount() == 1 || StreamSupport
                            .stream(root.relativize(p.getParent()).spliterator(), false).map(Path::toString)
                            .noneMatch(n -> n.startsWith(".") || n.equals("build") || n.equals("target")))
                    .sorted().collect(Collectors.toList());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int[] errors = {0};
        DiagnosticListener<JavaFileObject> quiet = d -> { if (d.getKind() == Diagnostic.Kind.ERROR) errors[0]++; };
        StandardJavaFileManager fm = javac.getStandardFileManager(quiet, null, java.nio.charset.StandardCharsets.UTF_8);
        List<String> opts = new ArrayList<>(List.of("-proc:none", "-nowarn", "-Xlint:none", "-encoding", "UTF-8",
                // keep attributing after errors (javac may otherwise stop before ATTR once one is reported)
                "-XDshould-stop.ifError=FLOW", "-Xmaxerrs", "100000"));
        opts.addAll(List.of("-classpath", args.length > 1 ? args[1] : ""));
        JavacTask task = (JavacTask) javac.getTask(null, fm, quiet, opts, null, fm.getJavaFileObjectsFromPaths(files));
        trees = Trees.instance(task);
        sp = trees.getSourcePositions();
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        for (CompilationUnitTree cu : units) new Scanner(cu).scan(cu, null);
        StringBuilder out = new StringBuilder("{\"encoding\": \"utf16\", \"documents\": [");
        String sep = "";
        for (var d : docs.entrySet()) {
            out.append(sep).append("\n{\"path\": \"").append(esc(d.getKey())).append("\", \"occurrences\": [")
               .append(String.join(",\n ", d.getValue())).append("]}");
            sep = ",";
        }
        System.out.println(out.append("]}"));
        System.err.printf("JavaOracle: %d files, %d javac errors; %d call sites: %d to the sources, %d unresolved%n",
                files.size(), errors[0], calls, toSource, unresolved);
    }

    static String esc(String s) { return s.replace("\\", "\\\\").replace("\"", "\\\""); }

    static CharSequence text(CompilationUnitTree cu) {
        return texts.computeIfAbsent(cu, c -> {
            try { return c.getSourceFile().getCharContent(true); } catch (IOException e) { throw new RuntimeException(e); }
        });
    }

    /** Whether the unit's text at pos is name. */
    static boolean at(CompilationUnitTree cu, int pos, String name) {
        CharSequence t = text(cu);
        return pos >= 0 && pos + name.length() <= t.length() && t.subSequence(pos, pos + name.length()).toString().equals(name);
    }

    /** The start offset of the whole-word name in the unit's text at or after from, or -1. */
    static int findName(CompilationUnitTree cu, String name, long from, long to) {
        if (from < 0) return -1;
        Matcher m = Pattern.compile("(?<![\\w$])" + Pattern.quote(name) + "(?![\\w$])").matcher(text(cu));
        return m.region((int) from, (int) Math.min(to, m.regionEnd())).find() ? m.start() : -1;
    }

    /** Position of a declaration's name: after its modifiers, type parameters and return type. */
    static int declName(CompilationUnitTree cu, Tree t) {
        long start = sp.getStartPosition(cu, t), end = sp.getEndPosition(cu, t);
        if (start < 0 || end < 0) return -1; // generated (default constructor, record members)
        if (t instanceof ClassTree c) {
            long from = Math.max(start, sp.getEndPosition(cu, c.getModifiers()));
            return findName(cu, c.getSimpleName().toString(), from, end);
        }
        MethodTree m = (MethodTree) t;
        long from = Math.max(start, sp.getEndPosition(cu, m.getModifiers()));
        for (Tree tp : m.getTypeParameters()) from = Math.max(from, sp.getEndPosition(cu, tp));
        if (m.getReturnType() != null) from = Math.max(from, sp.getEndPosition(cu, m.getReturnType()));
        String name = m.getName().contentEquals("<init>")
                ? ((ClassTree) trees.getPath(cu, m).getParentPath().getLeaf()).getSimpleName().toString()
                : m.getName().toString();
        return findName(cu, name, from, end);
    }

    /** The symbol of an element declared in the sources, or null. */
    static String symbol(Element e) {
        TreePath p = e == null ? null : trees.getPath(e);
        return p == null ? null : symbol(p.getCompilationUnit(), p.getLeaf());
    }

    /** The symbol of a class or method declaration: its name's position, or null if it has none. */
    static String symbol(CompilationUnitTree cu, Tree t) {
        if (!(t instanceof ClassTree || t instanceof MethodTree)) return null;
        return symbols.computeIfAbsent(t, k -> {
            int pos = declName(cu, t);
            if (pos < 0) return null;
            long line = cu.getLineMap().getLineNumber(pos);
            String name = text(cu).subSequence(pos, findEnd(cu, pos)).toString();
            return String.format("%s:%d:%d:%s", rel(cu), line - 1, pos - cu.getLineMap().getStartPosition(line), name);
        });
    }

    static int findEnd(CompilationUnitTree cu, int pos) {
        CharSequence t = text(cu);
        int e = pos;
        while (e < t.length() && Character.isJavaIdentifierPart(t.charAt(e))) e++;
        return e;
    }

    static String rel(CompilationUnitTree cu) {
        return root.relativize(Paths.get(cu.getSourceFile().toUri())).toString().replace('\\', '/');
    }

    static class Scanner extends TreePathScanner<Void, Void> {
        final CompilationUnitTree cu;

        Scanner(CompilationUnitTree cu) { this.cu = cu; }

        /** Records an occurrence of name at pos if the text there is that name. */
        void emit(int pos, String name, String sym, boolean def, boolean callable) {
            if (sym == null || !at(cu, pos, name)) return;
            long line = cu.getLineMap().getLineNumber(pos);
            int col = (int) (pos - cu.getLineMap().getStartPosition(line));
            docs.computeIfAbsent(rel(cu), k -> new ArrayList<>()).add(String.format(
                    "{\"symbol\": \"%s\", \"line\": %d, \"col\": %d, \"end_col\": %d, \"def\": %b, \"callable\": %b}",
                    esc(sym), line - 1, col, col + name.length(), def, callable));
        }

        void def(Tree t, String name, boolean callable) {
            emit(declName(cu, t), name, symbol(cu, t), true, callable);
        }

        /** Offset and name of the last identifier of a name expression (`foo`, `a.b.foo`, `C<T>`). */
        Object[] nameOf(Tree t) {
            while (t instanceof ParameterizedTypeTree || t instanceof AnnotatedTypeTree)
                t = t instanceof ParameterizedTypeTree p ? p.getType() : ((AnnotatedTypeTree) t).getUnderlyingType();
            if (t instanceof IdentifierTree i)
                return new Object[] {(int) sp.getStartPosition(cu, i), i.getName().toString(), t};
            if (t instanceof MemberSelectTree s) {
                String n = s.getIdentifier().toString();
                return new Object[] {(int) (sp.getEndPosition(cu, s) - n.length()), n, t};
            }
            return null;
        }

        @Override public Void visitClass(ClassTree t, Void v) {
            if (t.getSimpleName().length() > 0) def(t, t.getSimpleName().toString(), false);
            return super.visitClass(t, v);
        }

        @Override public Void visitMethod(MethodTree t, Void v) {
            ClassTree owner = (ClassTree) getCurrentPath().getParentPath().getLeaf();
            def(t, t.getName().contentEquals("<init>") ? owner.getSimpleName().toString() : t.getName().toString(), true);
            return super.visitMethod(t, v);
        }

        @Override public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
            Object[] n = nameOf(t.getMethodSelect());
            if (n != null && !n[1].equals("this") && !n[1].equals("super") && at(cu, (int) n[0], (String) n[1])) {
                calls++;
                Element e = trees.getElement(new TreePath(getCurrentPath(), t.getMethodSelect()));
                String sym = e instanceof ExecutableElement ? symbol(e) : null;
                if (!(e instanceof ExecutableElement)) unresolved++;
                if (sym != null) toSource++;
                emit((int) n[0], (String) n[1], sym, false, true);
            }
            return super.visitMethodInvocation(t, v);
        }

        @Override public Void visitNewClass(NewClassTree t, Void v) {
            Object[] n = nameOf(t.getIdentifier());
            if (n != null && at(cu, (int) n[0], (String) n[1])) { // (enum constants have no such name)
                calls++;
                Element c = trees.getElement(getCurrentPath());
                String ctor = symbol(c);
                String cls = symbol(trees.getElement(new TreePath(getCurrentPath(), (Tree) n[2])));
                if (!(c instanceof ExecutableElement)) unresolved++;
                if (ctor != null || cls != null) toSource++;
                emit((int) n[0], (String) n[1], ctor, false, true);
                emit((int) n[0], (String) n[1], cls, false, ctor == null);
            }
            return super.visitNewClass(t, v);
        }
    }
}
