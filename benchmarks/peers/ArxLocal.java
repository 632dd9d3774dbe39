import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXConfiguration.AnonymizationAlgorithm;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.PrivacyCriterion;
import org.deidentifier.arx.exceptions.RollbackRequiredException;
import org.deidentifier.arx.metric.Metric;

/**
 * ARX's local transformation, as its GUI runs it, for benchmarks/local_recoding_bench.py.
 *
 * <pre>
 * java ArxLocal data.csv out.csv k qid=hierarchy.csv ... [sensitive=a] [ldiv=l] [tclose=t:equal|t:hier:file]
 * </pre>
 *
 * Files are ';'-separated UTF-8 CSVs with a header (hierarchies: ARX's format, one row per leaf). ARX is
 * configured as its GUI's "local transformation": the loss metric with generalization/suppression factor 0,
 * a suppression limit of 1 - 1/100, then {@code ARXResult.optimizeIterativeFast(output, 0.01)}. Where ARX
 * refuses its optimal search ("Solution space is too large") the run falls back to its heuristic search
 * (BEST_EFFORT_BOTTOM_UP, ARX's default limits) and says so. Writes the published table to out.csv and
 * prints one JSON line: {"seconds": s[, "heuristic": true], "suppressed": rows}, seconds from reading the
 * data to the optimized output (writing excluded, a refused optimal search included). Where ARX finds no
 * solution it writes no table and the line has "note": "ARX: no solution (...)" instead of "suppressed".
 * Bad arguments or input ARX refuses: the message last on stderr, exit status 2.
 */
public final class ArxLocal {

    private static final double ITERATIONS = 100d;
    private static final String USAGE = "usage: java ArxLocal data.csv out.csv k qid=hierarchy.csv ... "
            + "[sensitive=a] [ldiv=l] [tclose=t:equal|t:hier:file]";

    private ArxLocal() {
    }

    /** The parsed command line. */
    private static final class Args {
        File data;
        File out;
        int k;
        final Map<String, File> qids = new LinkedHashMap<>();
        String sensitive;
        Integer ldiv;
        String tclose;
    }

    public static void main(String[] argv) throws IOException {
        Args args;
        try {
            args = parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println(USAGE);
            System.err.println("ArxLocal: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            run(args);
        } catch (IllegalArgumentException e) { // ARX's refusals of the input name the attribute or value
            System.err.println("ArxLocal: " + e.getMessage());
            System.exit(2);
        }
    }

    private static Args parse(String[] argv) {
        if (argv.length < 4) {
            throw new IllegalArgumentException("expected data.csv, out.csv, k and at least one qid=hierarchy.csv");
        }
        Args a = new Args();
        a.data = existing(argv[0], "data");
        a.out = new File(argv[1]);
        a.k = positive(argv[2], "k");
        for (int i = 3; i < argv.length; i++) {
            int eq = argv[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("argument '" + argv[i] + "' is not name=value");
            }
            option(a, argv[i].substring(0, eq), argv[i].substring(eq + 1));
        }
        check(a);
        return a;
    }

    private static void option(Args a, String name, String value) {
        switch (name) {
            case "sensitive" -> a.sensitive = value;
            case "ldiv" -> a.ldiv = positive(value, "ldiv");
            case "tclose" -> a.tclose = value;
            default -> a.qids.put(name, existing(value, "hierarchy of " + name));
        }
    }

    private static void check(Args a) {
        if (a.qids.isEmpty()) {
            throw new IllegalArgumentException("no qid=hierarchy.csv given");
        }
        if ((a.ldiv != null || a.tclose != null) != (a.sensitive != null)) {
            throw new IllegalArgumentException("ldiv= and tclose= need sensitive=, and sensitive= needs one of them");
        }
        if (a.sensitive != null && a.qids.containsKey(a.sensitive)) {
            throw new IllegalArgumentException("sensitive attribute '" + a.sensitive + "' is also a qid");
        }
    }

    private static File existing(String path, String what) {
        File f = new File(path);
        if (!f.isFile()) {
            throw new IllegalArgumentException(what + ": no file '" + path + "'");
        }
        return f;
    }

    private static int positive(String value, String what) {
        try {
            int v = Integer.parseInt(value);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(what + " must be a positive integer, got '" + value + "'");
    }

    private static Hierarchy hierarchy(File file) throws IOException {
        return Hierarchy.create(file, StandardCharsets.UTF_8, ';');
    }

    private static PrivacyCriterion tcloseness(String attribute, String spec) throws IOException {
        String[] parts = spec.split(":", 3);
        double t;
        try {
            t = Double.parseDouble(parts[0]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tclose: t must be a number, got '" + parts[0] + "'");
        }
        if (parts.length == 2 && parts[1].equals("equal")) {
            return new EqualDistanceTCloseness(attribute, t);
        }
        if (parts.length == 3 && parts[1].equals("hier")) {
            return new HierarchicalDistanceTCloseness(attribute, t, hierarchy(existing(parts[2], "tclose hierarchy")));
        }
        throw new IllegalArgumentException("tclose must be t:equal or t:hier:file, got '" + spec + "'");
    }

    private static Data load(Args a) throws IOException {
        Data data = Data.create(a.data, StandardCharsets.UTF_8, ';');
        for (Map.Entry<String, File> q : a.qids.entrySet()) {
            data.getDefinition().setAttributeType(q.getKey(), hierarchy(q.getValue()));
        }
        if (a.sensitive != null) {
            data.getDefinition().setAttributeType(a.sensitive, AttributeType.SENSITIVE_ATTRIBUTE);
        }
        return data;
    }

    private static ARXConfiguration configure(Args a) throws IOException {
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(a.k));
        if (a.ldiv != null) {
            config.addPrivacyModel(new DistinctLDiversity(a.sensitive, a.ldiv));
        }
        if (a.tclose != null) {
            config.addPrivacyModel(tcloseness(a.sensitive, a.tclose));
        }
        config.setQualityModel(Metric.createLossMetric(0d));
        config.setSuppressionLimit(1d - 1d / ITERATIONS);
        return config;
    }

    /** ARX's optimal search, or its heuristic one where it refuses the optimal (config then says so). */
    private static ARXResult anonymize(Data data, ARXConfiguration config) throws IOException {
        try {
            return new ARXAnonymizer().anonymize(data, config);
        } catch (IllegalArgumentException e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("Solution space is too large")) {
                throw e;
            }
            config.setAlgorithm(AnonymizationAlgorithm.BEST_EFFORT_BOTTOM_UP);
            return new ARXAnonymizer().anonymize(data, config);
        }
    }

    private static void run(Args a) throws IOException {
        long start = System.nanoTime();
        Data data = load(a);
        ARXConfiguration config = configure(a);
        ARXResult result = anonymize(data, config);
        boolean heuristic = config.getAlgorithm() != AnonymizationAlgorithm.OPTIMAL;
        if (!result.isResultAvailable()) {
            String search = heuristic ? "heuristic" : "optimal";
            String note = "ARX: no solution (" + search + " search, 99 % suppression limit)";
            System.out.println(json(seconds(start), heuristic) + ", \"note\": \"" + note + "\"}");
            return;
        }
        DataHandle output = result.getOutput(false);
        try {
            result.optimizeIterativeFast(output, 1d / ITERATIONS);
        } catch (RollbackRequiredException e) {
            throw new IllegalStateException("ARX asks for a rollback of the optimized output", e);
        }
        double seconds = seconds(start);
        output.save(a.out, ';');
        System.out.println(json(seconds, heuristic) + ", \"suppressed\": " + suppressed(output) + "}");
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    private static int suppressed(DataHandle output) {
        int n = 0;
        for (int row = 0; row < output.getNumRows(); row++) {
            n += output.isOutlier(row) ? 1 : 0;
        }
        return n;
    }

    /** The JSON line's first fields, its closing brace left to the caller. */
    private static String json(double seconds, boolean heuristic) {
        String s = String.format(Locale.ROOT, "{\"seconds\": %.4f", seconds);
        return s + (heuristic ? ", \"heuristic\": true" : "");
    }
}
