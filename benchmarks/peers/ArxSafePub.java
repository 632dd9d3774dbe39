import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXConfiguration.SearchStepSemantics;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.criteria.EDDifferentialPrivacy;
import org.deidentifier.arx.metric.Metric;

/**
 * ARX's data-dependent differential privacy (SafePub), for benchmarks/dp_bench.py.
 *
 * <pre>
 * java ArxSafePub data.csv out.csv epsilon delta search-budget steps qid=hierarchy.csv ...
 * </pre>
 *
 * Files are ';'-separated UTF-8 CSVs with a header (hierarchies: ARX's format, one row per leaf). Every column
 * not named as a qid is an identifying attribute (ARX publishes it as "*"), so only the qids are released.
 * ARX is configured as its own data-dependent test does: {@code new EDDifferentialPrivacy(epsilon, delta)}
 * (the sample drawn from SecureRandom, a new one on every run), suppression limit 1, the loss metric,
 * {@code setDPSearchBudget(search-budget)} (an absolute share of epsilon, below epsilon) and
 * {@code setHeuristicSearchStepLimit(steps, EXPANSIONS)}. Writes the whole output (every input row, in
 * input order; rows not sampled or suppressed are ARX's outliers, "*" in every qid) to out.csv and prints
 * one JSON line: {"k": k, "beta": b, "rows": output rows, "outliers": suppressed rows, "seconds": s,
 * "levels": {qid: level, ...}}, k and beta those ARX derived from (epsilon - search budget, delta), seconds
 * from reading the data to the output handle (writing excluded). Bad arguments or input ARX refuses: the
 * message last on stderr, exit status 2; no solution (which a suppression limit of 1 rules out) is an
 * exception, exit status 1.
 */
public final class ArxSafePub {

    private static final String USAGE = "usage: java ArxSafePub data.csv out.csv epsilon delta search-budget steps "
            + "qid=hierarchy.csv ...";

    private ArxSafePub() {
    }

    /** The parsed command line. */
    private static final class Args {
        File data;
        File out;
        double epsilon;
        double delta;
        double budget;
        int steps;
        final Map<String, File> qids = new LinkedHashMap<>();
    }

    public static void main(String[] argv) throws IOException {
        Args args;
        try {
            args = parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println(USAGE);
            System.err.println("ArxSafePub: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            run(args);
        } catch (IllegalArgumentException e) { // ARX's refusals of the input name the attribute or value
            System.err.println("ArxSafePub: " + e.getMessage());
            System.exit(2);
        }
    }

    private static Args parse(String[] argv) {
        if (argv.length < 7) {
            throw new IllegalArgumentException(
                    "expected data.csv, out.csv, epsilon, delta, search-budget, steps and at least one qid=hierarchy.csv");
        }
        Args a = new Args();
        a.data = existing(argv[0], "data");
        a.out = new File(argv[1]);
        a.epsilon = number(argv[2], "epsilon", 0d, Double.POSITIVE_INFINITY);
        a.delta = number(argv[3], "delta", 0d, 1d);
        a.budget = number(argv[4], "search-budget", 0d, a.epsilon);
        a.steps = steps(argv[5]);
        for (int i = 6; i < argv.length; i++) {
            int eq = argv[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("argument '" + argv[i] + "' is not qid=hierarchy.csv");
            }
            String name = argv[i].substring(0, eq);
            if (a.qids.put(name, existing(argv[i].substring(eq + 1), "hierarchy of " + name)) != null) {
                throw new IllegalArgumentException("qid '" + name + "' given twice");
            }
        }
        return a;
    }

    private static File existing(String path, String what) {
        File f = new File(path);
        if (!f.isFile()) {
            throw new IllegalArgumentException(what + ": no file '" + path + "'");
        }
        return f;
    }

    /** A number strictly between low and high. */
    private static double number(String value, String what, double low, double high) {
        try {
            double v = Double.parseDouble(value);
            if (v > low && v < high) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        String range = high == Double.POSITIVE_INFINITY ? "> " + low : "in (" + low + ", " + high + ")";
        throw new IllegalArgumentException(what + " must be a number " + range + ", got '" + value + "'");
    }

    private static int steps(String value) {
        try {
            int v = Integer.parseInt(value);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("steps must be a positive integer, got '" + value + "'");
    }

    private static Data load(Args a) throws IOException {
        Data data = Data.create(a.data, StandardCharsets.UTF_8, ';');
        DataHandle handle = data.getHandle();
        for (String qid : a.qids.keySet()) {
            if (handle.getColumnIndexOf(qid) < 0) {
                throw new IllegalArgumentException("qid '" + qid + "' is not a column of " + a.data);
            }
        }
        for (int column = 0; column < handle.getNumColumns(); column++) {
            String name = handle.getAttributeName(column);
            File file = a.qids.get(name);
            AttributeType type = file == null ? AttributeType.IDENTIFYING_ATTRIBUTE
                    : Hierarchy.create(file, StandardCharsets.UTF_8, ';');
            data.getDefinition().setAttributeType(name, type);
        }
        return data;
    }

    private static ARXConfiguration configure(Args a, EDDifferentialPrivacy model) {
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(model);
        config.setSuppressionLimit(1d);
        config.setQualityModel(Metric.createLossMetric());
        config.setDPSearchBudget(a.budget);
        config.setHeuristicSearchStepLimit(a.steps, SearchStepSemantics.EXPANSIONS);
        return config;
    }

    private static void run(Args a) throws IOException {
        long start = System.nanoTime();
        Data data = load(a);
        EDDifferentialPrivacy model = new EDDifferentialPrivacy(a.epsilon, a.delta);
        ARXResult result = new ARXAnonymizer().anonymize(data, configure(a, model));
        if (!result.isResultAvailable()) { // not expected: with a suppression limit of 1 the root always qualifies
            throw new IllegalStateException("ARX found no solution");
        }
        String head = String.format(Locale.ROOT, "{\"k\": %d, \"beta\": %s", model.getK(), model.getBeta());
        DataHandle output = result.getOutput(false);
        double seconds = seconds(start);
        output.save(a.out, ';');
        System.out.println(head + String.format(Locale.ROOT, ", \"rows\": %d, \"outliers\": %d, \"seconds\": %.4f",
                output.getNumRows(), outliers(output), seconds) + ", \"levels\": " + levels(a, result) + "}");
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    private static int outliers(DataHandle output) {
        int n = 0;
        for (int row = 0; row < output.getNumRows(); row++) {
            n += output.isOutlier(row) ? 1 : 0;
        }
        return n;
    }

    /** The published transformation as a JSON object, qids in the order given. */
    private static String levels(Args a, ARXResult result) {
        ARXNode optimum = result.getGlobalOptimum();
        StringJoiner out = new StringJoiner(", ", "{", "}");
        for (String qid : a.qids.keySet()) {
            out.add("\"" + qid.replace("\\", "\\\\").replace("\"", "\\\"") + "\": " + optimum.getGeneralization(qid));
        }
        return out.toString();
    }
}
