package io.github.ratelimit.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs hold together: docs/README.md, the index, links every Markdown page under docs/; and every relative link
 * in README.md and docs/*.md leads to a file that exists and, where it names an anchor in a Markdown page, to one of
 * that page's headings, as GitHub derives anchors from headings (lower case, spaces to '-', other punctuation
 * dropped, a repeated heading suffixed -1, -2, ...).
 */
class DocumentationLinksTest {

    private static final Path ROOT = Path.of("..");
    private static final Path DOCS = ROOT.resolve("docs");
    private static final Pattern LINK =
            Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*])*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");

    @Test
    void theIndexLinksEveryPageUnderDocs() throws IOException {
        Path index = DOCS.resolve("README.md");
        Set<Path> linked = new HashSet<>();
        for (Link link : links(index)) {
            if (!link.file().isEmpty()) {
                linked.add(DOCS.resolve(link.file()).normalize());
            }
        }
        List<Path> pages;
        try (Stream<Path> files = Files.walk(DOCS)) {
            pages = files.filter(p -> p.toString().endsWith(".md"))
                    .map(Path::normalize)
                    .filter(p -> !p.equals(index.normalize()))
                    .sorted()
                    .toList();
        }
        assertThat(pages).as("the Markdown pages under docs/").isNotEmpty();
        assertThat(pages).as("pages under docs/ that %s does not link", index).allMatch(linked::contains);
    }

    @Test
    void everyRelativeLinkLeadsToAFileAndAHeading() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> files = Files.list(DOCS)) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            for (Link link : links(page)) {
                checked++;
                Path target = link.file().isEmpty()
                        ? page
                        : page.getParent().resolve(link.file()).normalize();
                if (!Files.exists(target)) {
                    broken.add(page + ": " + link.text() + " (no file " + target + ")");
                } else if (link.anchor() != null
                        && target.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(target, DocumentationLinksTest::anchorsOf)
                                .contains(link.anchor())) {
                    broken.add(page + ": " + link.text() + " (no heading #" + link.anchor() + " in " + target + ")");
                }
            }
        }
        assertThat(checked).as("relative links read").isPositive();
        assertThat(broken).as("links that lead nowhere").isEmpty();
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(anchorsOf(List.of(
                        "# `@RateLimit` on any bean",
                        "## Redis's failures: what they cost",
                        "## Keys",
                        "## Keys",
                        "```",
                        "## Not a heading",
                        "```")))
                .containsExactlyInAnyOrder("ratelimit-on-any-bean", "rediss-failures-what-they-cost", "keys", "keys-1");
    }

    private record Link(String text, String file, String anchor) {}

    /** The relative links of a page, outside code blocks and code spans; web addresses are left out. */
    private static List<Link> links(Path page) throws IOException {
        List<Link> links = new ArrayList<>();
        boolean code = false;
        for (String line : Files.readAllLines(page)) {
            if (line.stripLeading().startsWith("```")) {
                code = !code;
                continue;
            }
            if (code) {
                continue;
            }
            Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue;
                }
                int hash = target.indexOf('#');
                String file = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
                links.add(new Link(m.group(), file, hash < 0 ? null : target.substring(hash + 1)));
            }
        }
        return links;
    }

    private static Set<String> anchorsOf(Path page) {
        try {
            return anchorsOf(Files.readAllLines(page));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Set<String> anchorsOf(List<String> lines) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean code = false;
        for (String line : lines) {
            if (line.stripLeading().startsWith("```")) {
                code = !code;
                continue;
            }
            Matcher m = HEADING.matcher(line);
            if (code || !m.matches()) {
                continue;
            }
            String text = m.group(2).replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1");
            String slug = text.toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }
}
