import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.TCloseness;
import org.deidentifier.arx.test.AbstractAnonymizationTest;
import org.deidentifier.arx.test.AbstractAnonymizationTest.ARXAnonymizationTestCase;
import org.junit.runners.Parameterized.Parameters;

/**
 * One configuration of one of ARX's JUnit anonymization tests, run and timed as the test runs it, for
 * benchmarks/arx_privacy_suite.py.
 *
 * <pre>
 * java ArxSuiteCase Family index        (e.g. java ArxSuiteCase DPresence 3)
 * </pre>
 *
 * Family names the class org.deidentifier.arx.test.TestAnonymizationFamily (ARX's src/test, compiled with
 * JUnit by build_arx.sh); index counts, from 0, the cases its {@code @Parameters} method lists on
 * "./data/adult.csv", in their order (the script's index: the n-th such case in the source). Run from a
 * directory whose data/ holds every file that method reads while listing (build_arx.sh makes OUT_DIR/suite).
 * As {@code AbstractAnonymizationTest.test()}: the data and hierarchies from {@code getDataObject}, practical
 * monotonicity as the case says, then {@code ARXAnonymizer.anonymize} (TestAnonymizationTCloseness first
 * adds hierarchical 0.2-closeness on the sensitive attribute to a case without t-closeness, as its test()).
 * Prints one JSON line: {"case", "limit", "loss" (the optimum's highest score, null without a solution),
 * "expected" (the test's value, null where it expects no solution), "matches_junit" (the test's assertion on
 * the loss holds: the same string, or within the case's delta; no solution where it expects none),
 * "transformation", "seconds" (wall of anonymize alone), "cpu_seconds" (the JVM's CPU time, every thread,
 * over the same span)}. Bad arguments: the message last on stderr, exit status 2.
 */
public final class ArxSuiteCase {

    private static final String USAGE = "usage: java ArxSuiteCase Family index   (Family: LDiversity, KMap, ...)";
    private static final String ADULT = "./data/adult.csv";
    private static final Pattern JSON_NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?");

    private ArxSuiteCase() {
    }

    public static void main(String[] argv) throws IOException, ReflectiveOperationException {
        ARXAnonymizationTestCase testCase;
        try {
            if (argv.length != 2) {
                throw new IllegalArgumentException("expected a family and an index");
            }
            testCase = adultCase(argv[0], index(argv[1]));
        } catch (IllegalArgumentException e) {
            System.err.println(USAGE);
            System.err.println("ArxSuiteCase: " + e.getMessage());
            System.exit(2);
            return;
        }
        run(argv[0] + "[" + argv[1] + "]", argv[0], testCase);
    }

    private static int index(String value) {
        try {
            int v = Integer.parseInt(value);
            if (v >= 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("index must be an integer >= 0, got '" + value + "'");
    }

    /** The index-th case on Adult that the family's @Parameters method lists. */
    private static ARXAnonymizationTestCase adultCase(String family, int index) throws ReflectiveOperationException {
        List<ARXAnonymizationTestCase> adult = new ArrayList<>();
        for (Object[] row : listed(family)) {
            if (row[0] instanceof ARXAnonymizationTestCase c && ADULT.equals(c.dataset)) {
                adult.add(c);
            }
        }
        if (index >= adult.size()) {
            throw new IllegalArgumentException(family + " lists " + adult.size() + " cases on " + ADULT
                    + ", no index " + index);
        }
        return adult.get(index);
    }

    @SuppressWarnings("unchecked")
    private static Iterable<Object[]> listed(String family) throws ReflectiveOperationException {
        Class<?> cls;
        try {
            cls = Class.forName("org.deidentifier.arx.test.TestAnonymization" + family);
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("no test class TestAnonymization" + family
                    + " on the classpath (build_arx.sh compiles them)");
        }
        for (Method m : cls.getMethods()) {
            if (m.isAnnotationPresent(Parameters.class)) {
                try {
                    return (Iterable<Object[]>) m.invoke(null);
                } catch (InvocationTargetException e) { // e.g. a data file missing from ./data
                    throw new IllegalStateException("listing the cases of " + cls.getSimpleName() + " failed "
                            + "(run from a directory whose data/ holds the files it reads)", e.getCause());
                }
            }
        }
        throw new IllegalArgumentException(cls.getSimpleName() + " has no @Parameters method");
    }

    private static void run(String name, String family, ARXAnonymizationTestCase testCase) throws IOException {
        if (testCase.hashcode != -1) {
            throw new IllegalArgumentException(name + " is a local recoding case (checked by hash code), not run here");
        }
        if (family.equals("TCloseness") && !testCase.config.isPrivacyModelSpecified(TCloseness.class)) {
            String file = testCase.dataset.substring(0, testCase.dataset.length() - 4) + "_hierarchy_"
                    + testCase.sensitiveAttribute + ".csv";
            Hierarchy hierarchy = Hierarchy.create(file, StandardCharsets.UTF_8, ';');
            testCase.config.addPrivacyModel(
                    new HierarchicalDistanceTCloseness(testCase.sensitiveAttribute, 0.2d, hierarchy));
        }
        Data data = AbstractAnonymizationTest.getDataObject(testCase);
        testCase.config.setPracticalMonotonicity(testCase.practical);
        long cpu = cpuNanos();
        long start = System.nanoTime();
        ARXResult result = new ARXAnonymizer().anonymize(data, testCase.config);
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpuSeconds = (cpuNanos() - cpu) / 1e9;
        ARXNode optimum = result.getGlobalOptimum();
        String loss = optimum == null ? null : optimum.getHighestScore().toString();
        String expected = testCase.optimalTransformation == null ? null : testCase.optimalInformationLoss;
        System.out.println(String.format(Locale.ROOT,
                "{\"case\": \"%s\", \"limit\": %s, \"loss\": %s, \"expected\": %s, \"matches_junit\": %s, "
                        + "\"transformation\": %s, \"seconds\": %.4f, \"cpu_seconds\": %.4f}",
                name, testCase.config.getSuppressionLimit(), number(loss), number(expected),
                matches(testCase, loss), optimum == null ? "null" : Arrays.toString(optimum.getTransformation()),
                seconds, cpuSeconds));
    }

    /** AbstractAnonymizationTest.test()'s assertion on the loss. */
    private static boolean matches(ARXAnonymizationTestCase testCase, String loss) {
        if (testCase.optimalTransformation == null || loss == null) {
            return testCase.optimalTransformation == null && loss == null;
        }
        if (testCase.delta != null) {
            return Math.abs(Double.parseDouble(testCase.optimalInformationLoss) - Double.parseDouble(loss))
                    <= testCase.delta;
        }
        return testCase.optimalInformationLoss.equals(loss);
    }

    /** A score as a JSON number (null stays null; text that is not a JSON number becomes a JSON string). */
    private static String number(String text) {
        if (text == null) {
            return "null";
        }
        if (JSON_NUMBER.matcher(text).matches()) {
            return text;
        }
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
