/**
 * The data of `npm run bench:updates` (written for this benchmark; no outside source). Each subject is one thing that
 * changes over time — a person's team, a project's date, a service's setting, a policy, a user's preference — told
 * as 2–4 successive facts, oldest first: fact i+1 replaces fact i. `question` asks for the subject's value in other
 * words than the facts' (the subject's own name aside: a user asking must name it); the same question is asked for
 * the present and, with `as_of`, for a moment between two writes.
 *
 * Distractors are memories that answer no question: near-duplicates of a subject's facts about another entity
 * ("Bob Lindqvist's birthday is 3 May" beside "Alice Moreau's birthday is 3 May"), other attributes of a subject's
 * entity, and near-copies of a stale fact with another subject. They are never superseded.
 */

export interface Subject {
  /** Stable id (kebab-case), used in reports. */
  id: string;
  /** The title every fact of the subject is stored with. */
  title: string;
  /** Asks for the subject's value, paraphrased (not a fact's words). */
  question: string;
  /** 2–4 facts, oldest first; each replaces the one before it. */
  facts: string[];
}

export interface Distractor {
  title: string;
  content: string;
  /** The subject it is meant to be confused with (documentation; the bench does not need it). */
  near?: string;
}

export const SUBJECTS: readonly Subject[] = [
  {
    id: 'payments-deploy-day', title: 'Payments team deploy day',
    question: 'On which weekday does the payments team ship releases to production?',
    facts: [
      'The payments team deploys on Fridays.',
      "The payments team's deploy day moved to Tuesday.",
      'Payments deploys now happen on Wednesdays.',
    ],
  },
  {
    id: 'alice-team', title: 'Alice Moreau, team',
    question: 'Which group is Alice Moreau part of?',
    facts: [
      'Alice Moreau works on the billing team.',
      'Alice Moreau transferred to the infrastructure team.',
      'Alice Moreau joined the mobile app team.',
    ],
  },
  {
    id: 'falcon-launch', title: 'Project Falcon launch date',
    question: 'When does Falcon go live?',
    facts: [
      'Project Falcon is scheduled to launch on 14 March.',
      "Project Falcon's launch slipped to 2 April.",
      'Project Falcon will now launch on 21 April.',
      "Project Falcon's launch date is fixed at 5 May.",
    ],
  },
  {
    id: 'orders-db-version', title: 'Orders database version',
    question: 'Which Postgres release is behind the order store?',
    facts: [
      'The orders database runs PostgreSQL 13.',
      'The orders database was upgraded to PostgreSQL 15.',
      'The orders database now runs PostgreSQL 16.',
    ],
  },
  {
    id: 'checkout-oncall', title: 'Checkout on-call lead',
    question: 'Who should I page first when checkout breaks?',
    facts: [
      'Priya Natarajan is the on-call lead for the checkout service.',
      'Marco Rossi took over as on-call lead for checkout.',
    ],
  },
  {
    id: 'berlin-office', title: 'Berlin office address',
    question: 'What is the street address of our workplace in Berlin?',
    facts: [
      'The Berlin office is at Torstraße 12.',
      'The Berlin office moved to Friedrichstraße 80.',
    ],
  },
  {
    id: 'standup-time', title: 'Daily standup time',
    question: 'What time does the morning team sync begin?',
    facts: [
      'The daily standup is at 9:30.',
      'Standup moved to 10:00.',
      'The daily standup now starts at 9:15.',
    ],
  },
  {
    id: 'public-api-limit', title: 'Public API rate limit',
    question: 'How many calls per minute can one key make against our external API?',
    facts: [
      'The public API allows 100 requests per minute per key.',
      'The public API rate limit was raised to 300 requests per minute.',
      'The public API limit is now 1000 requests per minute per key.',
      'The public API limit was lowered to 600 requests per minute.',
    ],
  },
  {
    id: 'dana-manager', title: 'Dana Whitfield, manager',
    question: "Who is Dana Whitfield's boss?",
    facts: [
      'Dana Whitfield reports to Omar Haddad.',
      "Dana Whitfield's manager is now Keiko Sato.",
    ],
  },
  {
    id: 'user-editor', title: "User's code editor",
    question: 'Which program does the user write code in?',
    facts: [
      "The user's preferred code editor is VS Code.",
      'The user switched to Neovim for programming.',
      'The user now does all development in Zed.',
    ],
  },
  {
    id: 'user-diet', title: "User's diet",
    question: 'Are there foods the user does not eat?',
    facts: [
      'The user is vegetarian.',
      'The user became vegan in January and avoids dairy and eggs too.',
    ],
  },
  {
    id: 'sprint-length', title: 'Sprint length',
    question: 'How long is one iteration cycle for the team?',
    facts: [
      'Sprints last two weeks.',
      'Sprints were shortened to one week.',
      'Sprints are three weeks long since the reorganisation.',
    ],
  },
  {
    id: 'ci-provider', title: 'CI provider',
    question: 'Which service executes our build pipelines?',
    facts: [
      'CI runs on Jenkins.',
      'Continuous integration moved from Jenkins to GitHub Actions.',
      'CI now runs on Buildkite.',
    ],
  },
  {
    id: 'prod-region', title: 'Production region',
    question: 'In which data-centre area do our live servers run?',
    facts: [
      'Production is hosted in AWS eu-west-1 (Ireland).',
      'Production moved to AWS eu-central-1 (Frankfurt).',
    ],
  },
  {
    id: 'meal-allowance', title: 'Travel meal allowance',
    question: 'How much can I claim for food per day when travelling for work?',
    facts: [
      'Meals on business trips are reimbursed up to 40 euros per day.',
      'The daily meal allowance for travel rose to 50 euros.',
      'The travel meal allowance is now 45 euros a day.',
    ],
  },
  {
    id: 'remote-days', title: 'Remote work policy',
    question: 'How many days a week may staff work from home?',
    facts: [
      'Employees may work remotely two days a week.',
      'Remote work is allowed three days a week.',
      'Staff must be in the office on Tuesdays and Thursdays only; the other three weekdays are remote.',
    ],
  },
  {
    id: 'password-rotation', title: 'Password rotation policy',
    question: 'How often do we have to change our login credentials?',
    facts: [
      'Passwords must be rotated every 90 days.',
      'Password rotation was extended to every 180 days.',
      'Passwords no longer expire; multi-factor authentication is mandatory instead.',
    ],
  },
  {
    id: 'support-email', title: 'Customer support address',
    question: 'What address do clients write to for assistance?',
    facts: [
      'Customer support is reached at help@acme.test.',
      'Customer support moved to support@acme.test.',
    ],
  },
  {
    id: 'carol-city', title: 'Carol Nguyen, city',
    question: 'In which city does Carol Nguyen reside?',
    facts: [
      'Carol Nguyen lives in Lyon.',
      'Carol Nguyen moved to Toulouse.',
      'Carol Nguyen relocated to Montreal.',
    ],
  },
  {
    id: 'backend-node', title: 'Backend Node.js version',
    question: 'Which Node runtime release does the server code use?',
    facts: [
      'The backend targets Node.js 16.',
      'The backend was upgraded to Node.js 18.',
      'The backend now runs on Node.js 20.',
      'The backend moved to Node.js 22.',
    ],
  },
  {
    id: 'log-retention', title: 'Log retention',
    question: 'How long do we store application log files before deleting them?',
    facts: [
      'Application logs are kept for 30 days.',
      'Log retention was cut to 14 days.',
      'Logs are retained for 90 days for compliance.',
    ],
  },
  {
    id: 'orion-lead', title: 'Project Orion lead',
    question: 'Who is in charge of Orion?',
    facts: [
      'Hannah Berg leads Project Orion.',
      "Project Orion's lead is now Tomasz Wójcik.",
      'Ines Duarte took over Project Orion.',
    ],
  },
  {
    id: 'pro-plan-price', title: 'Pro plan price',
    question: 'What is the monthly fee for the Pro subscription tier?',
    facts: [
      'The Pro plan costs 20 dollars per month.',
      'The Pro plan price went up to 25 dollars a month.',
      'The Pro plan is now 29 dollars monthly.',
    ],
  },
  {
    id: 'retro-room', title: 'Retrospective room',
    question: "Which meeting space is booked for the team's retrospectives?",
    facts: [
      'Retros are held in the Amsterdam room.',
      'Retros moved to the Lisbon room.',
    ],
  },
  {
    id: 'erik-vacation', title: 'Erik Johansson, vacation',
    question: 'When is Erik Johansson away on holiday?',
    facts: [
      'Erik Johansson is on vacation from 3 to 14 July.',
      'Erik Johansson moved his vacation to 17–28 July.',
    ],
  },
  {
    id: 'dashboard-framework', title: 'Dashboard front-end framework',
    question: 'Which UI library is the admin dashboard written with?',
    facts: [
      'The dashboard is built with Angular.',
      'The dashboard was rewritten in React.',
      'The dashboard is being migrated to Svelte, and new screens are Svelte only.',
    ],
  },
  {
    id: 'globex-contact', title: 'Globex contact',
    question: 'Who do we talk to at Globex?',
    facts: [
      'Our contact at Globex is Maria Lopez.',
      'Our Globex contact changed to Ken Adams.',
      'At Globex we now deal with Sofia Petrova.',
    ],
  },
  {
    id: 'mobile-version', title: 'Mobile app version',
    question: 'What is the newest shipped build number of our phone app?',
    facts: [
      'The latest mobile app release is version 4.2.',
      'Mobile app version 4.3 has been released.',
      'The mobile app is now at version 5.0.',
    ],
  },
  {
    id: 'backup-schedule', title: 'Database backup schedule',
    question: 'How frequently is the database snapshotted?',
    facts: [
      'Database backups run nightly at 02:00 UTC.',
      'Backups now run every six hours.',
    ],
  },
  {
    id: 'sdk-license', title: 'SDK license',
    question: 'Under which open-source terms is the SDK distributed?',
    facts: [
      'The SDK is licensed under GPL-3.0.',
      'The SDK was relicensed under Apache-2.0.',
      'The SDK is now MIT licensed.',
    ],
  },
  {
    id: 'support-hours', title: 'Support hours',
    question: 'When can customers reach the help desk?',
    facts: [
      'Support is available 9:00 to 17:00 CET on weekdays.',
      'Support hours were extended to 8:00–20:00 CET.',
      'Support now runs around the clock, 24/7.',
    ],
  },
  {
    id: 'default-branch', title: 'Default git branch',
    question: 'What is the name of the primary branch in our repository?',
    facts: [
      'The default git branch is master.',
      'The default branch was renamed to main.',
    ],
  },
  {
    id: 'jun-title', title: 'Jun Park, role',
    question: "What is Jun Park's job title?",
    facts: [
      'Jun Park is a senior engineer.',
      'Jun Park was promoted to staff engineer.',
      'Jun Park became engineering manager of the platform group.',
    ],
  },
  {
    id: 'user-work-laptop', title: "User's work laptop",
    question: 'What computer does the user use at their job?',
    facts: [
      "The user's work laptop is a ThinkPad X1.",
      'The user got a MacBook Pro 14 for work.',
      "The user's work machine is now a Framework 13.",
    ],
  },
  {
    id: 'user-timezone', title: "User's time zone",
    question: 'Which time zone should meetings with the user be scheduled in?',
    facts: [
      'The user is in the Pacific time zone.',
      'The user moved to Eastern time.',
      'The user now lives in Central European Time.',
    ],
  },
  {
    id: 'k8s-version', title: 'Cluster Kubernetes version',
    question: 'Which k8s release is our container platform on?',
    facts: [
      'The cluster runs Kubernetes 1.26.',
      'The cluster was upgraded to Kubernetes 1.28.',
      'The cluster is on Kubernetes 1.30.',
      'The cluster runs Kubernetes 1.31.',
    ],
  },
  {
    id: 'card-processor', title: 'Card payment processor',
    question: 'Which company handles our credit card transactions?',
    facts: [
      'Card payments are processed by Stripe.',
      'Card payments moved to Adyen.',
    ],
  },
  {
    id: 'q3-objective', title: 'Q3 objective',
    question: 'What is the main target for the third quarter?',
    facts: [
      'The Q3 objective is to reduce churn below 3 percent.',
      'The Q3 objective was changed to reaching 10,000 paying customers.',
    ],
  },
  {
    id: 'monitoring', title: 'Monitoring stack',
    question: 'What do we use for metrics and observability dashboards?',
    facts: [
      'Metrics are collected with Datadog.',
      'We replaced Datadog with Prometheus and Grafana.',
      'Observability moved to Honeycomb.',
    ],
  },
  {
    id: 'noah-desk', title: 'Noah Levi, desk',
    question: "Which level of the building is Noah Levi's workspace on?",
    facts: [
      'Noah Levi sits on the third floor.',
      "Noah Levi's desk moved to the fifth floor.",
    ],
  },
  {
    id: 'eng-hiring', title: 'Engineering hiring',
    question: 'Are we recruiting any developers?',
    facts: [
      'Engineering is hiring five backend developers.',
      'A hiring freeze is in place for engineering.',
      'Engineering hiring resumed with two open frontend roles.',
    ],
  },
  {
    id: 'catalog-cache', title: 'Catalog cache TTL',
    question: 'How long do cached product listings live?',
    facts: [
      'The product catalog cache expires after 5 minutes.',
      'The catalog cache TTL was raised to 15 minutes.',
      'The catalog cache lifetime is 60 seconds now.',
    ],
  },
  {
    id: 'rachel-extension', title: 'Rachel Kim, phone extension',
    question: 'Which internal number dials Rachel Kim?',
    facts: [
      "Rachel Kim's phone extension is 2231.",
      "Rachel Kim's extension changed to 4410.",
    ],
  },
  {
    id: 'team-offsite', title: 'Team offsite',
    question: 'Where and when is our company retreat this year?',
    facts: [
      'The team offsite is in Porto in June.',
      'The team offsite moved to Valencia in September.',
      'The offsite will be in Kraków in October.',
    ],
  },
  {
    id: 'upload-limit', title: 'Upload size limit',
    question: 'How big can a file be when users upload it?',
    facts: [
      'The maximum upload size is 10 MB.',
      'Uploads are now limited to 25 MB.',
      'The upload limit was raised to 100 MB.',
    ],
  },
  {
    id: 'security-officer', title: 'Security officer',
    question: 'Who is responsible for information security at the company?',
    facts: [
      'Victor Hale is the chief information security officer.',
      'The new CISO is Amara Okoye.',
    ],
  },
  {
    id: 'indentation', title: 'Code indentation',
    question: 'How wide is an indent level in our source files?',
    facts: [
      'The codebase uses 4-space indentation.',
      'The codebase switched to 2-space indentation.',
    ],
  },
  {
    id: 'user-climbing', title: "User's climbing day",
    question: 'Which day of the week is the user at the bouldering gym?',
    facts: [
      'The user goes climbing on Mondays.',
      "The user's climbing night moved to Thursday.",
      'The user now climbs on Saturday mornings.',
    ],
  },
  {
    id: 'user-car', title: "User's car",
    question: 'What vehicle does the user own?',
    facts: [
      'The user drives a 2012 Honda Civic.',
      'The user sold the Civic and bought a Tesla Model 3.',
    ],
  },
  {
    id: 'user-pets', title: "User's pets",
    question: 'What animals live with the user?',
    facts: [
      'The user has a cat named Miso.',
      'The user adopted a second cat, Tofu, so there are two cats now: Miso and Tofu.',
    ],
  },
  {
    id: 'issue-tracker', title: 'Issue tracker',
    question: 'Where do we file software defects?',
    facts: [
      'Bugs are tracked in Jira.',
      'Bug tracking moved to Linear.',
      'We track issues in GitHub Issues now.',
    ],
  },
  {
    id: 'tls-minimum', title: 'Minimum TLS version',
    question: 'What is the oldest secure-transport protocol version our load balancer still allows?',
    facts: [
      'The load balancer accepts TLS 1.0 and newer.',
      'TLS 1.0 and 1.1 were disabled; the minimum is TLS 1.2.',
      'Only TLS 1.3 is accepted now.',
    ],
  },
  {
    id: 'team-chat', title: 'Team chat tool',
    question: 'Which messaging app do colleagues use to talk to each other?',
    facts: [
      'Team chat happens on Slack.',
      'The company moved chat to Microsoft Teams.',
    ],
  },
  {
    id: 'payday', title: 'Payday',
    question: 'On what date do employees receive their salary?',
    facts: [
      'Salaries are paid on the 25th of each month.',
      'Payday moved to the last working day of the month.',
    ],
  },
  {
    id: 'gustavo-work', title: 'Gustavo Silva, current work',
    question: 'What is Gustavo Silva busy with?',
    facts: [
      'Gustavo Silva is working on the search relevance project.',
      'Gustavo Silva moved to the data pipeline rewrite.',
      'Gustavo Silva is on parental leave until March.',
      'Gustavo Silva is back and works on the billing migration.',
    ],
  },
  {
    id: 'sla-uptime', title: 'SLA uptime',
    question: 'What availability do we promise customers contractually?',
    facts: [
      'The uptime commitment in our SLA is 99.5 percent.',
      'The SLA uptime guarantee was raised to 99.9 percent.',
      'Customers get 99.95 percent uptime under the new SLA.',
    ],
  },
  {
    id: 'api-base-url', title: 'API base URL',
    question: 'Which endpoint address should integrations call?',
    facts: [
      'The API is served at api.acme.test/v1.',
      'The API base URL changed to api.acme.test/v2.',
    ],
  },
  {
    id: 'frontend-bundler', title: 'Frontend bundler',
    question: 'What tool packages our browser code for release?',
    facts: [
      'The frontend is bundled with Webpack.',
      'The frontend bundler is now Vite.',
      'The frontend build moved to Rspack.',
    ],
  },
  {
    id: 'user-book', title: "User's current book",
    question: 'What novel has the user got on the go?',
    facts: [
      "The user is reading 'Dune'.",
      "The user finished Dune and started 'The Left Hand of Darkness'.",
      "The user is now reading 'Piranesi'.",
    ],
  },
  {
    id: 'search-index-engine', title: 'Search index engine',
    question: 'What technology powers the site search index?',
    facts: [
      'Site search runs on Elasticsearch.',
      'Site search was moved to OpenSearch.',
      'Site search now uses Typesense.',
      'Site search was consolidated into PostgreSQL full-text search.',
    ],
  },
  {
    id: 'design-review-day', title: 'Design review day',
    question: 'What day are design critiques scheduled?',
    facts: [
      'Design reviews take place every Thursday afternoon.',
      'Design reviews moved to Monday mornings.',
    ],
  },
];

export const DISTRACTORS: readonly Distractor[] = [
  // Near-duplicates: the same attribute of another entity.
  { title: 'Search team deploy day', content: 'The search team deploys on Thursdays.', near: 'payments-deploy-day' },
  { title: 'Alice Moreau, birthday', content: "Alice Moreau's birthday is 3 May.", near: 'alice-team' },
  { title: 'Bob Lindqvist, birthday', content: "Bob Lindqvist's birthday is 3 May.", near: 'alice-team' },
  { title: 'Bob Lindqvist, team', content: 'Bob Lindqvist works on the billing team.', near: 'alice-team' },
  { title: 'Project Heron launch date', content: 'Project Heron is scheduled to launch on 14 March.', near: 'falcon-launch' },
  { title: 'Project Falcon repository', content: "Project Falcon's code lives in the falcon-core repository on GitLab.", near: 'falcon-launch' },
  { title: 'Analytics warehouse version', content: 'The analytics warehouse runs PostgreSQL 14.', near: 'orders-db-version' },
  { title: 'Search on-call lead', content: 'Priya Natarajan is the on-call lead for the search service.', near: 'checkout-oncall' },
  { title: 'Munich office address', content: 'The Munich office is at Leopoldstraße 12.', near: 'berlin-office' },
  { title: 'Weekly planning time', content: 'The weekly planning meeting is at 10:00 on Mondays.', near: 'standup-time' },
  { title: 'Admin API rate limit', content: 'The internal admin API allows 100 requests per minute.', near: 'public-api-limit' },
  { title: 'Evan Brooks, manager', content: 'Evan Brooks reports to Omar Haddad.', near: 'dana-manager' },
  { title: "User's terminal", content: "The user's preferred terminal is iTerm2.", near: 'user-editor' },
  { title: "User's partner, diet", content: "The user's partner is vegetarian.", near: 'user-diet' },
  { title: 'Quarter length', content: 'Quarterly planning cycles last thirteen weeks.', near: 'sprint-length' },
  { title: 'Data jobs scheduler', content: 'Nightly data jobs run on Airflow.', near: 'ci-provider' },
  { title: 'Staging region', content: 'The staging environment is hosted in AWS eu-west-1 (Ireland).', near: 'prod-region' },
  { title: 'Hotel allowance', content: 'Hotel stays on business trips are reimbursed up to 150 euros per night.', near: 'meal-allowance' },
  { title: 'Contractor remote policy', content: 'Contractors may work remotely five days a week.', near: 'remote-days' },
  { title: 'API key rotation', content: 'API keys must be rotated every 90 days.', near: 'password-rotation' },
  { title: 'Sales address', content: 'Sales inquiries go to sales@acme.test.', near: 'support-email' },
  { title: 'Carol Nguyen, sister', content: "Carol Nguyen's sister lives in Lyon.", near: 'carol-city' },
  { title: 'David Okafor, city', content: 'David Okafor lives in Toulouse.', near: 'carol-city' },
  { title: 'Frontend Node.js version', content: 'The frontend build uses Node.js 18.', near: 'backend-node' },
  { title: 'Backup retention', content: 'Database backups are kept for 30 days.', near: 'log-retention' },
  { title: 'Project Vega lead', content: 'Hannah Berg leads Project Vega.', near: 'orion-lead' },
  { title: 'Team plan price', content: 'The Team plan costs 20 dollars per user per month.', near: 'pro-plan-price' },
  { title: 'Sprint planning room', content: 'Sprint planning is held in the Amsterdam room.', near: 'retro-room' },
  { title: 'Freya Nilsson, vacation', content: 'Freya Nilsson is on vacation from 3 to 14 July.', near: 'erik-vacation' },
  { title: 'Marketing site framework', content: 'The marketing site is built with Angular.', near: 'dashboard-framework' },
  { title: 'Initech contact', content: 'Our contact at Initech is Maria Lopez.', near: 'globex-contact' },
  { title: 'Desktop app version', content: 'The latest desktop app release is version 4.3.', near: 'mobile-version' },
  { title: 'Log rotation schedule', content: 'Log rotation runs nightly at 02:00 UTC.', near: 'backup-schedule' },
  { title: 'CLI license', content: 'The command-line tool is licensed under GPL-3.0.', near: 'sdk-license' },
  { title: 'Reception hours', content: 'The office reception is open 9:00 to 17:00 CET.', near: 'support-hours' },
  { title: 'Docs repository branch', content: "The docs repository's default branch is master.", near: 'default-branch' },
  { title: 'Lena Fischer, role', content: 'Lena Fischer is a senior engineer.', near: 'jun-title' },
  { title: "User's personal laptop", content: "The user's personal laptop is a ThinkPad X1.", near: 'user-work-laptop' },
  { title: "User's manager, time zone", content: "The user's manager is in the Pacific time zone.", near: 'user-timezone' },
  { title: 'Staging cluster version', content: 'The staging cluster runs Kubernetes 1.28.', near: 'k8s-version' },
  { title: 'Seller payouts', content: 'Payouts to sellers are processed by Stripe.', near: 'card-processor' },
  { title: 'Q4 objective', content: 'The Q4 objective is to reduce churn below 3 percent.', near: 'q3-objective' },
  { title: 'Error tracking', content: 'Application errors are tracked with Sentry.', near: 'monitoring' },
  { title: 'Olivia Grant, desk', content: 'Olivia Grant sits on the third floor.', near: 'noah-desk' },
  { title: 'Sales hiring', content: 'Sales is hiring three account executives.', near: 'eng-hiring' },
  { title: 'Session cache TTL', content: 'The session cache expires after 5 minutes.', near: 'catalog-cache' },
  { title: 'Samir Aziz, phone extension', content: "Samir Aziz's phone extension is 2231.", near: 'rachel-extension' },
  { title: 'Sales kickoff', content: 'The sales kickoff is in Porto in June.', near: 'team-offsite' },
  { title: 'Email attachment limit', content: 'The maximum email attachment size is 10 MB.', near: 'upload-limit' },
  { title: 'Data protection officer', content: 'Victor Hale is also the data protection officer.', near: 'security-officer' },
  { title: 'Python indentation', content: 'The Python services use 4-space indentation.', near: 'indentation' },
  { title: "User's swimming day", content: 'The user goes swimming on Mondays.', near: 'user-climbing' },
  { title: "User's brother, car", content: "The user's brother drives a 2012 Honda Civic.", near: 'user-car' },
  { title: "Neighbour's dog", content: "The user's neighbour has a dog named Miso.", near: 'user-pets' },
  { title: 'Sales lead tracking', content: 'Sales leads are tracked in Salesforce.', near: 'issue-tracker' },
  { title: 'Customer tickets', content: 'Customer support tickets are tracked in Zendesk.', near: 'issue-tracker' },
  { title: 'Mail server TLS', content: 'The mail server accepts TLS 1.0 and newer.', near: 'tls-minimum' },
  { title: 'Community chat', content: 'The customer community chats on Discord.', near: 'team-chat' },
  { title: 'Contractor invoices', content: 'Contractor invoices are paid on the 25th of each month.', near: 'payday' },
  { title: 'Helena Costa, current work', content: 'Helena Costa is working on the search relevance project.', near: 'gustavo-work' },
  { title: 'Staging uptime goal', content: 'The internal uptime goal for staging is 99.5 percent.', near: 'sla-uptime' },
  { title: 'Status page', content: 'The status page is at status.acme.test.', near: 'api-base-url' },
  { title: 'Docs site bundler', content: 'The docs site is bundled with Webpack.', near: 'frontend-bundler' },
  { title: 'Book club', content: "The user's book club is reading 'Dune'.", near: 'user-book' },
  { title: 'Log search engine', content: 'Log search runs on Elasticsearch.', near: 'search-index-engine' },
  { title: 'Architecture review day', content: 'Architecture reviews take place every Thursday afternoon.', near: 'design-review-day' },
  // Unrelated memories, as a real workspace holds.
  { title: 'Parking', content: 'Visitor parking is in the basement, spaces 40 to 48.' },
  { title: 'Coffee machine', content: 'The espresso machine on the second floor is descaled every Friday.' },
  { title: 'Printer', content: 'The colour printer near the kitchen needs a badge to release jobs.' },
  { title: 'Glossary: MRR', content: 'MRR means monthly recurring revenue.' },
  { title: 'Holiday calendar', content: 'The office is closed between Christmas and New Year.' },
  { title: "User's favourite colour", content: "The user's favourite colour is teal." },
];

/** Problems with the fixture (empty: usable): at least 50 subjects of 2–4 distinct facts, ids and contents unique. */
export function fixtureProblems(subjects: readonly Subject[] = SUBJECTS, distractors: readonly Distractor[] = DISTRACTORS): string[] {
  const problems: string[] = [];
  if (subjects.length < 50) problems.push(`${subjects.length} subjects; at least 50 are needed`);
  const ids = new Set<string>();
  const contents = new Set<string>();
  const seeContent = (content: string, where: string) => {
    const key = content.trim().toLowerCase();
    if (contents.has(key)) problems.push(`${where}: content repeated elsewhere: ${content}`);
    contents.add(key);
  };
  for (const s of subjects) {
    if (ids.has(s.id)) problems.push(`subject id repeated: ${s.id}`);
    ids.add(s.id);
    if (s.facts.length < 2 || s.facts.length > 4) problems.push(`${s.id}: ${s.facts.length} facts; 2–4 are needed`);
    if (!s.question.trim() || !s.title.trim()) problems.push(`${s.id}: empty question or title`);
    s.facts.forEach((f, i) => seeContent(f, `${s.id} fact ${i + 1}`));
    // Paraphrased: the question is none of its facts.
    if (s.facts.some((f) => f.trim().toLowerCase() === s.question.trim().toLowerCase())) problems.push(`${s.id}: the question copies a fact`);
  }
  distractors.forEach((d, i) => {
    seeContent(d.content, `distractor ${i + 1}`);
    if (d.near !== undefined && !ids.has(d.near)) problems.push(`distractor ${i + 1} names an unknown subject ${d.near}`);
  });
  return problems;
}
